/**
 * The pick behind every work claim that several accounts share (webhook deliveries, proofs): rows
 * are taken in turns across owners (round-robin), the owner holding fewest going first, so no
 * owner's backlog, however long, holds another owner's first row back.
 *
 * The k-th candidate of an owner (from 0, in the order given) has turn `held + k`, where `held` is
 * what the owner already holds (running, in flight); rows are taken by turn, ties by the order
 * given, at most `limit` in all, and no owner gets a turn at or past `cap`. With `within`, only the
 * first `within.cap` candidates of each sub-group (a webhook) count at all.
 *
 * Every store computes the same pick: SQLite with this function, Postgres
 * in SQL (a window rank per owner, plus `held`, as the sort key), so the rule is stated here once.
 */
export const takeInTurns = <Row>(
  rows: ReadonlyArray<Row>,
  options: {
    readonly limit: number
    readonly owner: (row: Row) => string
    readonly cap: number
    readonly held?: ReadonlyMap<string, number> | undefined
    readonly within?: { readonly group: (row: Row) => string; readonly cap: number } | undefined
  }
): Array<Row> => {
  const { cap, held, limit, owner, within } = options
  if (limit <= 0) return []
  const perGroup = new Map<string, number>()
  const perOwner = new Map<string, number>()
  const turns: Array<{ readonly row: Row; readonly turn: number; readonly index: number }> = []
  rows.forEach((row, index) => {
    if (within !== undefined) {
      const group = within.group(row)
      const inGroup = perGroup.get(group) ?? 0
      perGroup.set(group, inGroup + 1)
      if (inGroup >= within.cap) return
    }
    const key = owner(row)
    const turn = perOwner.get(key) ?? held?.get(key) ?? 0
    perOwner.set(key, turn + 1)
    if (turn < cap) turns.push({ row, turn, index })
  })
  return turns.sort((a, b) => a.turn - b.turn || a.index - b.index).slice(0, limit).map((t) => t.row)
}
