/** The width help is written for: a terminal's default, and what a reader's mail or issue tracker keeps. */
export const HELP_WIDTH = 80

/**
 * Where a wrapped line's continuation starts: under the second column of a table row (text after
 * the first run of two or more spaces, as in `  --port   MZK_PORT  default 8080`), under the text
 * of a list item (`  - serve …`) or of a usage line (`$ create …`), else at the line's own indentation.
 */
const hangingIndent = (line: string): number => {
  const item = /^(\s*- |\$ )/.exec(line)
  if (item !== null) return item[1]!.length
  const column = /^(\s*\S+(?: \S+)*\s{2,})\S/.exec(line)
  if (column !== null && column[1]!.length <= HELP_WIDTH / 2) return column[1]!.length
  return /^\s*/.exec(line)![0].length
}

/**
 * Text wrapped at `width` columns between words, each line's continuation indented (see
 * `hangingIndent`, whose prefix of the first line is kept as it is); the padding @effect/cli leaves
 * at the end of lines is dropped. A word longer than the room (a long path) stays whole.
 */
export const wrapText = (text: string, width = HELP_WIDTH): string =>
  text.split("\n").flatMap((raw) => {
    const line = raw.trimEnd()
    if (line.length <= width) return [line]
    // A list item that is a table row (a command's usage, padding, its description): the
    // description on a line of its own, under the item's text.
    const row = /^(\s*- )(\S.*?\S) {2,}(\S.*)$/.exec(line)
    if (row !== null) return wrapText(`${row[1]}${row[2]}\n${" ".repeat(row[1]!.length)}${row[3]}`, width).split("\n")
    const at = hangingIndent(line)
    const rows: Array<string> = []
    for (const word of line.slice(at).split(/ +/)) {
      const last = rows.at(-1)
      if (last !== undefined && last.length + 1 + word.length <= width - at) rows[rows.length - 1] = `${last} ${word}`
      else rows.push(word)
    }
    return rows.map((row, i) => (i === 0 ? line.slice(0, at) : " ".repeat(at)) + row)
  }).join("\n")
