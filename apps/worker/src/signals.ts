// First SIGTERM/SIGINT: graceful stop (the running pass finishes). Second: forced exit.
export function installStopSignals(opts: {
  graceful: (signal: NodeJS.Signals) => void;
  forced: (signal: NodeJS.Signals) => void;
  target?: NodeJS.EventEmitter;
}): () => void {
  const target = opts.target ?? process;
  let received = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    received += 1;
    if (received === 1) opts.graceful(signal);
    else opts.forced(signal);
  };
  target.on("SIGTERM", onSignal);
  target.on("SIGINT", onSignal);
  return () => {
    target.off("SIGTERM", onSignal);
    target.off("SIGINT", onSignal);
  };
}
