/**
 * Takes ids in the order given, at most `limit` in all and at most `cap` per group, counting from
 * what each group already holds: the pick behind both work claims (deliveries per webhook, proofs
 * per account).
 */
export const pickCapped = <Row extends { readonly id: string }>(
  rows: ReadonlyArray<Row>,
  options: {
    readonly limit: number
    readonly cap: number
    readonly group: (row: Row) => string
    readonly held?: ReadonlyMap<string, number>
  }
): Array<string> => {
  const counts = new Map(options.held)
  const ids: Array<string> = []
  for (const row of rows) {
    if (ids.length >= options.limit) break
    const key = options.group(row)
    const count = counts.get(key) ?? 0
    if (count >= options.cap) continue
    counts.set(key, count + 1)
    ids.push(row.id)
  }
  return ids
}
