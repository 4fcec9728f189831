import { z } from 'zod';
import { archiveClient, archiveClientInput } from '../../core/clients/archive.ts';
import { createClient, createClientInput } from '../../core/clients/create.ts';
import { getClient } from '../../core/clients/get.ts';
import { listClients, listClientsInput } from '../../core/clients/list.ts';
import { listRecipients, setRecipients, setRecipientsInput } from '../../core/clients/recipients.ts';
import { updateClient, updateClientFields } from '../../core/clients/update.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });

/** Clients and their billing recipients (issue 22): Owner/Admin writes, workspace users list. */
export const clientsRoutes = [
  defineRoute({ method: 'GET', path: '/clients', op: listClients, input: { query: listClientsInput } }),
  defineRoute({ method: 'POST', path: '/clients', op: createClient, input: { body: createClientInput }, status: 201 }),
  defineRoute({ method: 'GET', path: '/clients/:id', op: getClient, input: { params: byId } }),
  defineRoute({ method: 'PATCH', path: '/clients/:id', op: updateClient, input: { params: byId, body: updateClientFields } }),
  defineRoute({ method: 'POST', path: '/clients/:id/archive', op: archiveClient, input: { params: byId, body: archiveClientInput.omit({ id: true }) } }),
  defineRoute({ method: 'GET', path: '/clients/:id/recipients', op: listRecipients, input: { params: byId } }),
  defineRoute({
    method: 'PUT',
    path: '/clients/:id/recipients',
    op: setRecipients,
    input: { params: byId, body: setRecipientsInput.omit({ id: true }) },
  }),
];
