/**
 * The webhook receiver of the delivery benchmark, in a process of its own (as a real receiver
 * would be): answers 200 and prints `<event id> <arrival ms>` per request, the arrival time on the
 * same wall clock the sender reads. Prints `listening <port>` first.
 */
import { createServer } from "node:http"

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const at = performance.timeOrigin + performance.now()
    response.writeHead(200).end("ok")
    const { id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string }
    process.stdout.write(`${id} ${at}\n`)
  })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`))
process.stdin.on("end", () => process.exit(0)).resume()
