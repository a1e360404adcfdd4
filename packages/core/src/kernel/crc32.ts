// CRC-32 (IEEE 802.3, the zlib polynomial). Hand-written because it is a dozen lines of a fixed
// standard, and `zlib.crc32` only exists from Node 22 on; the test vector is checked in tests.
const TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

export const crc32 = (text: string): number => {
  let crc = 0xffffffff
  for (let i = 0; i < text.length; i++) {
    // Keys are ASCII by construction; any other code unit is folded to its low byte.
    crc = TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8)
  }
  return (crc ^ 0xffffffff) >>> 0
}
