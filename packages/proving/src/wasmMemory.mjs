// Plain JavaScript, like the pool thread that loads it (see prove/proveThread.mjs).
// @ts-check
export const WASM_PAGE = 65536

/**
 * The witness generator with a ceiling on its memory: WebAssembly memory lives outside V8's heap
 * and the thread's resource limits, and an account's prebuilt wasm could otherwise grow it until
 * the process is killed. circom declares its memory with no maximum; this rewrites the module's
 * memory section with one (`maxPages`), so a `memory.grow` past it fails inside the wasm and the
 * proof fails, not the process. A module that needs more than the ceiling to start is refused.
 * @param {Uint8Array} bytes
 * @param {number} maxPages
 * @returns {Uint8Array}
 */
export const withMemoryCeiling = (bytes, maxPages) => {
  let at = 8
  const leb = () => {
    let value = 0
    let shift = 0
    let byte
    do {
      // Past the end reads as 0: the loop stops, and the module fails to compile later.
      byte = bytes[at++] ?? 0
      value += (byte & 0x7f) * 2 ** shift
      shift += 7
    } while (byte & 0x80)
    return value
  }
  /** @param {number} value */
  const encode = (value) => {
    /** @type {number[]} */
    const out = []
    do {
      let byte = value % 128
      value = Math.floor(value / 128)
      if (value > 0) byte |= 0x80
      out.push(byte)
    } while (value > 0)
    return out
  }
  while (at < bytes.length) {
    const sectionStart = at
    const id = bytes[at++] ?? 0
    const size = leb()
    const contentStart = at
    if (id === 2) {
      // An imported memory would be the host's to bound; circom never imports one.
      for (let count = leb(); count > 0; count--) {
        at += leb()
        at += leb()
        const kind = bytes[at++] ?? -1
        if (kind === 2) throw new Error("the witness generator imports its memory, which mzk does not provide")
        if (kind === 0) leb()
        else if (kind === 1) {
          at++
          if ((bytes[at++] ?? 0) & 1) leb()
          leb()
        } else if (kind === 3) at += 2
      }
    }
    if (id === 5) {
      /** @type {number[]} */
      const memories = []
      const declared = leb()
      for (let count = declared; count > 0; count--) {
        const flags = bytes[at++] ?? 0
        const min = leb()
        const max = flags & 1 ? leb() : undefined
        if (min > maxPages) {
          throw new Error(`the witness generator needs ${min * WASM_PAGE} bytes of memory to start, over the prover's budget of ${maxPages * WASM_PAGE}`)
        }
        memories.push(...[0x01], ...encode(min), ...encode(Math.min(max ?? maxPages, maxPages)))
      }
      const content = [...encode(declared), ...memories]
      const section = Uint8Array.from([5, ...encode(content.length), ...content])
      const out = new Uint8Array(sectionStart + section.length + bytes.length - (contentStart + size))
      out.set(bytes.subarray(0, sectionStart), 0)
      out.set(section, sectionStart)
      out.set(bytes.subarray(contentStart + size), sectionStart + section.length)
      return out
    }
    at = contentStart + size
  }
  return bytes
}

