// Provider call counts and failures by plugin, without touching any plugin:
// a view of the plugin whose operations report each call and each rejection to the metrics.
// Everything else (pluginId, provider, capabilities, and any operation added later, such as a
// delta export) passes through unchanged; operations run with the plugin itself as `this`, so
// plugins with private fields keep working. Only calls are observed, never the streams they
// return (reading a stream to count it would change how it flows).
import type { EnvironmentProvider } from "./types";
import { observeProviderCall } from "../metrics/observe";

/**
 * The contract's operations (providers/types.ts), and the delta export the providers are about to
 * offer. Other methods a plugin has (a fake provider's fault settings) are passed through uncounted.
 */
const OPERATIONS = new Set<PropertyKey>(["acquire", "exec", "exportWorkspace", "exportDelta", "salvageExport", "seedWorkspace", "placeInputs", "measureSandbox", "stopLease", "resume", "destroy", "inspect"]);

export function instrumentProvider<P extends EnvironmentProvider>(plugin: P): P {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(plugin, {
    get(target, property) {
      // Read from the plugin itself (not through the proxy): getters of plugins with private
      // fields must see the real object as `this`.
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function" || typeof property !== "string" || !OPERATIONS.has(property)) return value;
      let fn = wrapped.get(property);
      if (!fn) {
        const operation = property;
        const original = value as (...args: unknown[]) => unknown;
        fn = function instrumented(...args: unknown[]): unknown {
          let result: unknown;
          try {
            result = Reflect.apply(original, target, args);
          } catch (error) {
            observeProviderCall(target.pluginId, operation, error);
            throw error;
          }
          if (result instanceof Promise) {
            return result.then(
              (ok: unknown) => {
                observeProviderCall(target.pluginId, operation);
                return ok;
              },
              (error: unknown) => {
                observeProviderCall(target.pluginId, operation, error);
                throw error;
              },
            );
          }
          observeProviderCall(target.pluginId, operation);
          return result;
        };
        wrapped.set(property, fn);
      }
      return fn;
    },
  });
}
