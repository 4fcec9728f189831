import { z } from 'zod';
import { scopes } from '../core/auth/principal.ts';
import { describing } from '../core/response-schema.ts';

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for the MCP endpoint, so MCP clients that
 * discover authentication the standard way learn how to authenticate: a Bearer token in the
 * Authorization header, either a `wt_` API token or an access token from the authorization
 * server named in `authorization_servers` (this same service, src/http/oauth).
 */

/** The MCP endpoint's path: the protected resource. */
export const MCP_PATH = '/mcp';
/** Where the metadata is published: the well-known prefix, then the resource's path (RFC 9728 §3.1). */
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;
/** The same document at the bare well-known path, for clients that look there first. */
export const RESOURCE_METADATA_ROOT = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadata {
  resource: string;
  resource_name: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported: string[];
}

/** The metadata for the server reached at `origin` (`https://host:port`). */
export function protectedResourceMetadata(origin: string): ProtectedResourceMetadata {
  return {
    resource: `${origin}${MCP_PATH}`,
    resource_name: 'Work tracker MCP server',
    // the issuer is this service at the origin the client used (its RFC 8414 metadata is at /.well-known/oauth-authorization-server)
    authorization_servers: [origin],
    bearer_methods_supported: ['header'],
    // `admin` serves the REST administration only: no MCP tool administers
    scopes_supported: scopes.filter((s) => s !== 'admin'),
  };
}

/**
 * The challenge of a 401 on the MCP endpoint: Bearer, pointing at the metadata (RFC 9728 §5.1);
 * when a token was sent and refused, `error="invalid_token"` (RFC 6750 §3.1).
 */
export function mcpChallenge(origin: string, tokenSent = false): string {
  return `Bearer realm="worktracker", resource_metadata="${origin}${RESOURCE_METADATA_PATH}"${tokenSent ? ', error="invalid_token"' : ''}`;
}

/** The metadata's response schema (GET /.well-known/oauth-protected-resource). */
export const resourceMetadataSchema = describing<ProtectedResourceMetadata>()(
  z
    .object({
      resource: z.string().describe('The MCP endpoint’s URL.'),
      resource_name: z.string(),
      authorization_servers: z.array(z.string()).describe('The OAuth 2.1 authorization server issuing access tokens for this resource: this service.'),
      bearer_methods_supported: z.tuple([z.literal('header')]),
      scopes_supported: z.array(z.string()),
    })
    .meta({ id: 'ProtectedResourceMetadata', description: 'OAuth 2.0 Protected Resource Metadata (RFC 9728) of the MCP endpoint.' }),
);
