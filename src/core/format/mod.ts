/** Public surface of the format module: `get` filtering and JSON / XML / CSV bodies. */

export { applySelection, type FieldSelection, parseFieldSelection } from "./select.ts";
export {
  CONTENT_TYPES,
  type OutputFormat,
  parseFormat,
  type Rendered,
  renderError,
  renderLookup,
  renderSuccess,
} from "./render.ts";
