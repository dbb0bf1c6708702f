// The one place that talks to Daytona: an SDK client (`@daytonaio/sdk`, in polling mode, see
// README) per connection, and `call`, which runs one SDK call with the bounded, jittered backoff
// of backoff.ts for 429 and 5xx and turns what is left into a typed error (errors.ts). The API key
// is read from its variable for each client made (credentials.ts) and lives only in the SDK's
// memory.
import { setTimeout as sleep } from "node:timers/promises";
import { Daytona, type Sandbox } from "@daytonaio/sdk";
import type { DaytonaAddress } from "./address";
import { decideRetry, DEFAULT_BACKOFF, type BackoffPolicy } from "./backoff";
import { readApiKey, type VariableSource } from "./credentials";
import { providerErrorOf, retryAfterOf, statusOf } from "./errors";

export interface DaytonaClientOptions {
  variables: VariableSource;
  backoff?: BackoffPolicy;
  random?: () => number;
  /** Per HTTP request (the SDK's requestTimeoutMs); long transfers pass their own timeouts. */
  requestTimeoutMs?: number;
}

export type Connection = Omit<DaytonaAddress, "sandboxId">;

export class DaytonaClient {
  private cached: { key: string; sdk: Daytona } | undefined;

  constructor(
    readonly connection: Connection,
    private readonly options: DaytonaClientOptions,
  ) {}

  /** The SDK client, made again when the variable's value changed (a rotated key). */
  sdk(): Daytona {
    const key = readApiKey(this.options.variables, this.connection.apiKeyEnv);
    if (this.cached?.key !== key) {
      this.cached = {
        key,
        sdk: new Daytona({
          apiKey: key,
          apiUrl: this.connection.apiUrl,
          ...(this.connection.target !== undefined ? { target: this.connection.target } : {}),
          // Waits for a state by polling GET: no event stream to hold open (and the emulator serves none).
          useDeprecatedPolling: true,
          otelEnabled: false,
          ...(this.options.requestTimeoutMs !== undefined ? { requestTimeoutMs: this.options.requestTimeoutMs } : {}),
        }),
      };
    }
    return this.cached.sdk;
  }

  /**
   * One SDK call, again after a 429 or 5xx while the backoff allows it (only calls that are safe
   * to repeat go through here: reads, idempotent settings, and moves whose outcome the caller
   * reads back). `signal` cuts a wait short.
   */
  async call<T>(what: string, work: (sdk: Daytona) => Promise<T>, options: { sandboxId?: string; signal?: AbortSignal } = {}): Promise<T> {
    const policy = this.options.backoff ?? DEFAULT_BACKOFF;
    const random = this.options.random ?? Math.random;
    for (let attempt = 1; ; attempt++) {
      try {
        return await work(this.sdk());
      } catch (error) {
        const decision = decideRetry({ attempt, status: statusOf(error), retryAfter: retryAfterOf(error), nowMs: Date.now() }, policy, random);
        // An abort stays the caller's own reason (the export deadline names it).
        if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : error;
        if (decision.kind === "give_up") {
          throw providerErrorOf(error, { what, variable: this.connection.apiKeyEnv, sandboxId: options.sandboxId });
        }
        await sleep(decision.delayMs, undefined, options.signal ? { signal: options.signal } : undefined);
      }
    }
  }

  /** A fresh read of one sandbox (GET /sandbox/{id}); provider_sandbox_missing when it is gone. */
  sandbox(sandboxId: string, signal?: AbortSignal): Promise<Sandbox> {
    return this.call(`reading sandbox ${sandboxId}`, (sdk) => sdk.get(sandboxId), { sandboxId, ...(signal ? { signal } : {}) });
  }
}
