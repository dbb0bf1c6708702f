// The contract every controller platform implements (R-RW-1, R-RW-6); controller-platform.ts lists them.
import type { ControllerPlatformIdentity } from "./platform-identity";

export type PlatformDetection =
  | { kind: "none" }
  | { kind: "detected"; identity: ControllerPlatformIdentity; harness: string }
  /** Some of the platform's variables are set, not all, or one is not an id: a configuration error. */
  | { kind: "invalid"; platform: string; message: string };

export interface ControllerPlatform {
  /** The `kind` its identities carry. */
  readonly name: string;
  /** The harness that proves this platform's stops (deployment docs name it; shown to operators). */
  readonly harness: string;
  /** Reads the process's own variables; never a hostname, a PID or elapsed time (R-RW-6). */
  detect(env: Readonly<Record<string, unknown>>): PlatformDetection;
}
