import type { ToolDef } from './tool.ts';
import { listChangesTool } from './tools/changes.ts';
import { getWorkflowTool } from './tools/workflow.ts';

/** Every MCP tool; each calls the same core operation as its REST twin. */
export const allTools: ToolDef[] = [getWorkflowTool, listChangesTool];
