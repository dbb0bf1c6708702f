// The built-in fake provider (R-SO-3) and its fault injection.
export { createFakeProvider, type FakeCall, type FakeExecContext, type FakeExecOutcome, type FakeExecScript, type FakeProvider, type FakeProviderOptions, type FakeSandbox, type FakeSandboxStore } from "./fake-provider";
export { FakeFaults, FAKE_OPERATIONS, type FakeOperation } from "./faults";
export { applyChanges, readWorkspaceTar, workspaceTar, type FakeEntry, type FakeFileChange, type FakeWorkspace } from "./virtual-workspace";
export { fakeEnvironmentConfig, fakeFaultsConfig, fakeTurnConfig, faultsFromConfig, parseFakeConfig, type FakeEnvironmentConfig, type FakeFaultsConfig, type FakeTurnConfig } from "./config";
