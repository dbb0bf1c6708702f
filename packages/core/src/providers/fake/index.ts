// The built-in fake provider (R-SO-3) and its fault injection.
export { createFakeProvider, type FakeCall, type FakeProvider, type FakeProviderOptions } from "./fake-provider";
export type { FakeExecContext, FakeExecOutcome, FakeExecScript } from "./exec";
export type { FakeSandbox, FakeSandboxStore } from "./sandbox";
export { FakeFaults, FAKE_OPERATIONS, type FakeOperation } from "./faults";
export { applyChanges, readWorkspaceTar, workspaceTar, type FakeEntry, type FakeFileChange, type FakeWorkspace } from "./virtual-workspace";
export { fakeEnvironmentConfig, fakeFaultsConfig, fakeTurnConfig, faultsFromConfig, parseFakeConfig, type FakeEnvironmentConfig, type FakeFaultsConfig, type FakeTurnConfig } from "./config";
