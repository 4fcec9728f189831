import { LRUCache } from 'lru-cache';
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

// Raw HTML in the source is escaped (html: false); bare URLs become links.
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

/**
 * The only images shown inline: the workspace's own attachments, served on the same origin to a
 * reader who may see them. Any other image would be fetched by every reader's browser the moment
 * the text is shown (a tracking pixel that reports who read it, when and from where).
 */
const ATTACHMENT_IMAGE = /^\/api\/w\/[a-z0-9][a-z0-9-]{0,62}\/attachments\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/download$/i;

const renderImage = md.renderer.rules.image!;
/**
 * `![alt](src)`: an attachment stays an image; a remote (http, https) image becomes a link to it
 * labelled with its alt text, fetched only if the reader follows it; anything else (data:, other
 * relative paths) and an image inside a link (no link in a link) becomes its alt text.
 */
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet('src') ?? '');
  if (ATTACHMENT_IMAGE.test(src)) return renderImage(tokens, idx, options, env, self);
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  let depth = 0;
  for (const t of tokens.slice(0, idx)) depth += t.type === 'link_open' ? 1 : t.type === 'link_close' ? -1 : 0;
  if (depth === 0 && /^https?:\/\//i.test(src)) return `<a href="${md.utils.escapeHtml(src)}">${md.utils.escapeHtml(alt || src)}</a>`;
  return md.utils.escapeHtml(alt);
};

const sanitizeOptions: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'del', 's'],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    img: ['src', 'alt', 'title'],
    code: ['class'],
    ol: ['start'],
    th: ['style'],
    td: ['style'],
  },
  allowedStyles: { th: { 'text-align': [/^(left|right|center)$/] }, td: { 'text-align': [/^(left|right|center)$/] } },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  // the second fence: an img that is not an attachment never leaves here, whatever made it
  allowedSchemesByTag: { img: [] },
  exclusiveFilter: (frame) => frame.tag === 'img' && !ATTACHMENT_IMAGE.test(frame.attribs.src ?? ''),
  allowProtocolRelative: false,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow' } }),
  },
};

/**
 * The renderer's version: stored HTML (comments.body_html, tickets.description_html, sql/110) made
 * by another version is not used but rendered again on read. Bump it with any change above that
 * changes the HTML of some source (markdown-it or sanitize-html options, rules, a major upgrade).
 */
export const MARKDOWN_VERSION = 1;

/** The HTML a writer stores beside Markdown `source` (sql/110), with the version that made it. */
export function storedHtml(source: string): { html: string; version: number } {
  return { html: renderMarkdown(source), version: MARKDOWN_VERSION };
}

// Rendering is a pure function of the source and costs 0.1-0.4 ms per comment (sanitize-html
// most of it): a page with 100 comments spent more time here than in the database. Pages are
// read far more often than edited, so results are kept, bounded by size (UTF-16 bytes).
const rendered = new LRUCache<string, string>({
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (html, source) => 2 * (html.length + source.length) + 64,
});

/**
 * Markdown (description, comment body, an email's text) to the sanitised HTML the contract returns
 * beside it. markdown-it never passes raw HTML through; sanitize-html is the second fence (schemes,
 * attributes, images), and every link gets rel="noopener noreferrer nofollow".
 */
export function renderMarkdown(source: string): string {
  if (!source) return '';
  let html = rendered.get(source);
  if (html === undefined) {
    html = sanitizeHtml(md.render(source), sanitizeOptions);
    rendered.set(source, html);
  }
  return html;
}
