import { Console, Effect } from "effect"

/** Rows printed as aligned columns two spaces apart, the first row the header; the last column is not padded. */
export const printTable = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  return Effect.forEach(rows, (row) => Console.log(row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]! + 2) : cell)).join("")), {
    discard: true
  })
}
