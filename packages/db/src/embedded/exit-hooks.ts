// Servers we started must not outlive us by accident. The server is a detached process, so it
// survives our exit unless told; these hooks tell it.
//  - 'exit' (normal end, process.exit, uncaught error): ask each server for a fast shutdown;
//    it completes on its own after we are gone.
//  - SIGINT / SIGTERM / SIGHUP when nobody else handles them: stop each server, then die of the
//    same signal as we would have. When the application has its own handler (the launcher stops
//    its web and worker children first and the database last), the application owns the order
//    and calls stop() itself; the 'exit' hook remains the backstop.
// Listeners are installed only while a server runs, so an idle process keeps its usual signal
// behaviour.

export interface StoppableServer {
  stop(): Promise<void>;
  signalStop(): void;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type HandledSignal = (typeof SIGNALS)[number];

const servers = new Set<StoppableServer>();
let signalled = false;

function onExit(): void {
  for (const server of servers) server.signalStop();
}

function onSignal(signal: HandledSignal): void {
  if (process.listenerCount(signal) > 1) return;
  if (signalled) {
    // Second signal while stopping: stop waiting. The servers already have their shutdown request.
    reraise(signal);
    return;
  }
  signalled = true;
  void Promise.allSettled([...servers].map((server) => server.stop())).then(() => reraise(signal));
}

function reraise(signal: HandledSignal): void {
  detach();
  process.kill(process.pid, signal);
}

const handlers = new Map<HandledSignal, () => void>(
  SIGNALS.map((signal) => [signal, () => onSignal(signal)]),
);

function attach(): void {
  process.on("exit", onExit);
  for (const [signal, handler] of handlers) process.on(signal, handler);
}

function detach(): void {
  process.off("exit", onExit);
  for (const [signal, handler] of handlers) process.off(signal, handler);
}

/** Track a running server; returns the function that stops tracking it (call it once it has stopped). */
export function stopOnProcessExit(server: StoppableServer): () => void {
  if (servers.size === 0) attach();
  servers.add(server);
  return () => {
    if (servers.delete(server) && servers.size === 0) {
      detach();
      signalled = false;
    }
  };
}
