/**
 * `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any of the three formats a
 * recipient must accept (§5.6.7). Hand-written because the core takes no Node built-ins and
 * `Date.parse` accepts far more than HTTP-dates (and reads zoneless ones as local time).
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const MONTH = `(${MONTHS.join("|")})`
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})"
/** `Sun, 06 Nov 1994 08:49:37 GMT`, the format senders must use. */
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`)
/** `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete RFC 850). */
const RFC850_DATE = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`)
/** `Sun Nov  6 08:49:37 1994` (obsolete asctime, in UTC). */
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`)

const utc = (year: number, month: string, day: string, hours: string, minutes: string, seconds: string): number | undefined => {
  const monthIndex = MONTHS.indexOf(month)
  const [d, h, m, s] = [Number(day), Number(hours), Number(minutes), Number(seconds)]
  const ms = Date.UTC(year, monthIndex, d, h, m, s)
  // Date.UTC rolls 31 Feb into March: only a date that reads back the same is one.
  const date = new Date(ms)
  const valid = date.getUTCFullYear() === year && date.getUTCMonth() === monthIndex && date.getUTCDate() === d &&
    h <= 23 && m <= 59 && s <= 60
  return valid ? ms : undefined
}

/** An RFC 850 two-digit year more than 50 years ahead is the most recent past year with those digits (§5.6.7). */
const fullYear = (twoDigits: number, nowMs: number): number => {
  const nowYear = new Date(nowMs).getUTCFullYear()
  const year = nowYear - (nowYear % 100) + twoDigits
  return year > nowYear + 50 ? year - 100 : year
}

/**
 * When a response's `Retry-After` asks to be retried, in epoch ms, `nowMs` being when it was
 * received; undefined for a value that is neither form (it is then ignored).
 */
export const retryAfterMillis = (value: string, nowMs: number): number | undefined => {
  const text = value.trim()
  // Past twelve digits (31,000 years) the number only loses precision; any wait that long is capped anyway.
  if (/^\d+$/.test(text)) return nowMs + Math.min(Number(text), 1e12) * 1000
  let match = IMF_FIXDATE.exec(text)
  if (match !== null) return utc(Number(match[3]), match[2]!, match[1]!, match[4]!, match[5]!, match[6]!)
  match = RFC850_DATE.exec(text)
  if (match !== null) return utc(fullYear(Number(match[3]), nowMs), match[2]!, match[1]!, match[4]!, match[5]!, match[6]!)
  match = ASCTIME_DATE.exec(text)
  if (match !== null) return utc(Number(match[6]), match[1]!, match[2]!.trim(), match[3]!, match[4]!, match[5]!)
  return undefined
}
