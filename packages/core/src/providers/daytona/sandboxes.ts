// The plugin's shared state: one client per connection (client.ts), and `open`, which turns a
// lease handle into a freshly read sandbox of that lease (address.ts says where it lives;
// identity.ts says whether it is the lease's own).
import type { Sandbox } from "@daytonaio/sdk";
import type { LeaseHandle } from "../types";
import { decodeAddress, type DaytonaAddress } from "./address";
import type { BackoffPolicy } from "./backoff";
import { DaytonaClient, type Connection } from "./client";
import type { VariableSource } from "./credentials";
import { belongsToLease, foreignSandbox } from "./identity";
import { StatCacheMemo } from "./stat-cache-memo";

export interface DaytonaPluginSettings {
  pluginId: string;
  variables: VariableSource;
  backoff?: BackoffPolicy;
  random?: () => number;
  /** Where seed archives are spooled and validated before upload (never inside a workspace). */
  stagingDir: string;
  /** How long a lifecycle move (create, start, stop, delete) may take to settle, in seconds. */
  lifecycleTimeoutSec: number;
  /** How long one archive transfer may take, in seconds (the caller's signal may cut it shorter). */
  transferTimeoutSec: number;
}

export interface OpenedSandbox {
  client: DaytonaClient;
  sandbox: Sandbox;
  address: DaytonaAddress;
}

export class DaytonaSandboxes {
  private readonly clients = new Map<string, DaytonaClient>();
  /** This controller's copies of its sandboxes' stat caches (delta-export.ts). */
  readonly statCaches = new StatCacheMemo();

  constructor(readonly settings: DaytonaPluginSettings) {}

  get pluginId(): string {
    return this.settings.pluginId;
  }

  client(connection: Connection): DaytonaClient {
    const key = JSON.stringify([connection.apiUrl, connection.apiKeyEnv, connection.target ?? null]);
    let client = this.clients.get(key);
    if (!client) {
      client = new DaytonaClient(connection, {
        variables: this.settings.variables,
        ...(this.settings.backoff ? { backoff: this.settings.backoff } : {}),
        ...(this.settings.random ? { random: this.settings.random } : {}),
      });
      this.clients.set(key, client);
    }
    return client;
  }

  /** The lease's sandbox, read now; provider_sandbox_missing / provider_sandbox_foreign otherwise. */
  async open(lease: LeaseHandle, signal?: AbortSignal): Promise<OpenedSandbox> {
    const address = decodeAddress(lease.providerLeaseId);
    const client = this.client(address);
    const sandbox = await client.sandbox(address.sandboxId, signal);
    if (!belongsToLease(sandbox, lease)) throw foreignSandbox(address.sandboxId, lease.leaseId);
    return { client, sandbox, address };
  }
}
