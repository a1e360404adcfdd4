import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { CoreServices, SessionAuthenticator, type Storage, type StorageError } from "@mzk/core"
import { MzkHttpLive, serveMzk } from "@mzk/http"
import { Layer } from "effect"
import { createServer } from "node:http"
import { type DatabaseTarget, storageLayer } from "./database.js"
import { NodeEntropy } from "./entropy.js"

export interface MzkOptions {
  readonly database: DatabaseTarget
  /** The embedding application's session check; API keys only when absent. */
  readonly sessions?: Layer.Layer<SessionAuthenticator>
}

/**
 * The composition root: the core services over the chosen storage, the OS's randomness and the
 * session authenticator. Every way of running mzk (server, worker, CLI, embedding) starts here.
 */
export const MzkCore = (options: MzkOptions) =>
  CoreServices.pipe(
    Layer.provideMerge(storageLayer(options.database) as Layer.Layer<Storage, StorageError>),
    Layer.provideMerge(NodeEntropy),
    Layer.provideMerge(options.sessions ?? SessionAuthenticator.none)
  )

export interface ServeOptions extends MzkOptions {
  readonly port: number
  readonly host: string
}

/** The HTTP server on a Node `http.Server`, listening until its scope closes. */
export const MzkServer = (options: ServeOptions) =>
  serveMzk.pipe(
    HttpServer.withLogAddress,
    Layer.provide(MzkHttpLive),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host })),
    // Kept in the output, so code running beside the server (tests, CLI tasks) shares its services.
    Layer.provideMerge(MzkCore(options))
  )
