import type { ToolDef } from './tool.ts';
import { getBoardColumnTool, getBoardTool, getMyWorkTool } from './tools/board.ts';
import { listChangesTool } from './tools/changes.ts';
import { listClientsTool } from './tools/clients.ts';
import { addCommentTool, deleteCommentTool, editCommentTool, listCommentsTool } from './tools/comments.ts';
import { getContextPackTool } from './tools/context.ts';
import { listPeopleTool, listProjectsTool } from './tools/directory.ts';
import { getBankBalancesTool, getDocumentTool, listDocumentsTool } from './tools/documents.ts';
import { listRatesTool } from './tools/rates.ts';
import { addCodehostLinkTool, linkTicketsTool, removeCodehostLinkTool, setParentTool, unlinkTicketsTool } from './tools/relations.ts';
import { getTicketTool, searchTicketsTool } from './tools/tickets-read.ts';
import { createTicketTool, moveTicketTool, updateTicketTool } from './tools/tickets-write.ts';
import { getTimeEntriesTool, listCategoriesTool, logTimeTool, updateTimeEntryTool } from './tools/time.ts';
import { getWorkflowTool } from './tools/workflow.ts';

/**
 * Every MCP tool; each calls the same core operation as its REST twin (get_context_pack and
 * get_bank_balances have none: they exist for assistants). Session-only routes have no tool;
 * nor do attachment upload and download (binary bodies). get_document is the document download.
 */
export const allTools: ToolDef[] = [
  getContextPackTool,
  searchTicketsTool,
  getTicketTool,
  createTicketTool,
  updateTicketTool,
  moveTicketTool,
  addCommentTool,
  listCommentsTool,
  editCommentTool,
  deleteCommentTool,
  linkTicketsTool,
  unlinkTicketsTool,
  setParentTool,
  addCodehostLinkTool,
  removeCodehostLinkTool,
  listChangesTool,
  getBoardTool,
  getBoardColumnTool,
  getMyWorkTool,
  logTimeTool,
  updateTimeEntryTool,
  getTimeEntriesTool,
  listCategoriesTool,
  listDocumentsTool,
  getDocumentTool,
  getBankBalancesTool,
  listRatesTool,
  getWorkflowTool,
  listProjectsTool,
  listPeopleTool,
  listClientsTool,
];
