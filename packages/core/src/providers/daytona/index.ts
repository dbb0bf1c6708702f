// The Daytona provider plugin (README "Running agents on Daytona").
export { createDaytonaProvider, type DaytonaProviderOptions } from "./daytona-provider";
export { daytonaEnvironmentConfig, parseDaytonaConfig, type DaytonaEnvironmentConfig } from "./config";
