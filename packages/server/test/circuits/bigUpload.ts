import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { request } from "node:http"

/**
 * A prebuilt upload whose `zkey` part is `zkeyBytes` long, generated and sent as it goes (the
 * sender never holds it): what the tests and the bench of streamed uploads send to a server in
 * another process. Resolves with the answer and the SHA-256 of the zkey part as sent.
 */
export const sendBigUpload = (
  baseUrl: string,
  token: string,
  options: { readonly name: string; readonly zkeyBytes: number }
): Promise<{ readonly status: number; readonly body: string; readonly zkeyDigest: string }> =>
  new Promise((resolve, reject) => {
    const boundary = "mzk-big-upload-boundary-3f9a"
    const part = (name: string, filename: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${options.name}\r\n` +
        `${part("wasm", "c.wasm")}\0asm\r\n${part("sym", "c.sym")}1,1,0,main.out\r\n${part("zkey", "c.zkey")}`
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const hash = createHash("sha256")
    // Bytes that differ from chunk to chunk (a counter in each 1 MiB piece), so no two uploads of
    // one test share chunks by accident and the digest covers every position.
    const piece = Buffer.alloc(1024 * 1024)
    const req = request(`${baseUrl}/api/v1/circuits`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": String(head.length + options.zkeyBytes + tail.length)
      }
    })
    req.on("error", reject)
    req.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), zkeyDigest: hash.digest("hex") }))
    })
    let sent = 0
    let index = 0
    const pump = () => {
      while (sent < options.zkeyBytes) {
        const n = Math.min(piece.length, options.zkeyBytes - sent)
        piece.fill(index & 0xff)
        piece.writeUInt32LE(index++, 0)
        const chunk = Buffer.from(piece.subarray(0, n))
        hash.update(chunk)
        sent += n
        if (!req.write(chunk)) return void req.once("drain", pump)
      }
      req.end(tail)
    }
    req.write(head)
    pump()
  })

/** A process's resident memory now and at its peak, in bytes, from `/proc/<pid>/status` (Linux). */
export const memoryOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024
  return { rss: kib("VmRSS"), peak: kib("VmHWM") }
}

/**
 * Resets a process's peak resident memory (`VmHWM`) to what it holds now, so the next peak is
 * the one of what follows; false where the kernel does not let this process do it.
 */
export const resetPeak = (pid: number) => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}
