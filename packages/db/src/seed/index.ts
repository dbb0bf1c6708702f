export {
  seedDemo,
  DEMO_COMPANY_ID,
  DEMO_SECOND_COMPANY_ID,
  LOCAL_PLUGIN_ID,
  type SeedDemoOptions,
} from "./seed-demo";
export { ensureDemoWorkspace, DEMO_WORKSPACE_FILES } from "./demo-workspace";
