type Who = 'owner' | 'admin' | 'member' | 'agent' | 'clientElevated' | 'client';

export interface DemoTicket {
  project: 'WEB' | 'APP' | 'OPS' | 'INBOX';
  title: string;
  description?: string;
  kind: 'request' | 'bug' | 'feature' | 'task';
  state: 'triage' | 'todo' | 'in_progress' | 'in_review' | 'done' | 'cancelled';
  priority: 'urgent' | 'high' | 'normal' | 'low';
  reporter: Who;
  assignee?: Who;
  viewer?: Who;
  labels?: string[];
  estimate?: number;
  dueInDays?: number;
  /** Index of an earlier demo ticket that is this one's parent. */
  parent?: number;
  source?: 'ui' | 'email' | 'api';
  comments?: { by: Who; audience: 'internal' | 'client'; body: string }[];
}

/** A believable few weeks of an agency's work across its projects and Inbox. */
export const demoTickets: DemoTicket[] = [
  { project: 'WEB', title: 'Migrate CMS content to the new page builder', kind: 'task', state: 'in_progress', priority: 'high', reporter: 'member', assignee: 'member', labels: ['backend'], estimate: 480, dueInDays: 5,
    description: '## Scope\n\n- Export all *news* pages\n- Map legacy fields to blocks\n- Keep redirects for old URLs',
    comments: [{ by: 'member', audience: 'internal', body: 'Export script is done; mapping next.' }, { by: 'clientElevated', audience: 'client', body: 'Please keep the press archive.' }] },
  { project: 'WEB', title: 'Launch checklist for the relaunch', kind: 'task', state: 'todo', priority: 'urgent', reporter: 'owner', assignee: 'member', dueInDays: 12 },
  { project: 'WEB', title: 'Hero image is blurry on retina screens', kind: 'bug', state: 'in_review', priority: 'normal', reporter: 'clientElevated', assignee: 'member', labels: ['frontend', 'design'], estimate: 60,
    comments: [{ by: 'member', audience: 'client', body: 'Fixed with 2x assets, please check staging.' }] },
  { project: 'WEB', title: 'Contact form sends duplicate emails', kind: 'bug', state: 'done', priority: 'high', reporter: 'client', assignee: 'member', labels: ['backend', 'customer'], estimate: 90 },
  { project: 'WEB', title: 'Cookie banner text review', kind: 'request', state: 'todo', priority: 'low', reporter: 'clientElevated', viewer: 'client', labels: ['customer'] },
  { project: 'WEB', title: 'Accessibility audit (WCAG 2.2 AA)', kind: 'feature', state: 'todo', priority: 'high', reporter: 'admin', assignee: 'member', estimate: 600, dueInDays: -2 },
  { project: 'WEB', title: 'Audit colour contrast on buttons', kind: 'task', state: 'todo', priority: 'normal', reporter: 'member', assignee: 'member', parent: 5, estimate: 120 },
  { project: 'WEB', title: 'Audit keyboard navigation', kind: 'task', state: 'in_progress', priority: 'normal', reporter: 'member', assignee: 'agent', parent: 5, estimate: 180 },
  { project: 'WEB', title: 'Set up preview deployments per branch', kind: 'feature', state: 'done', priority: 'normal', reporter: 'agent', assignee: 'agent', labels: ['infrastructure'], source: 'api' },
  { project: 'WEB', title: 'Newsletter signup widget', kind: 'feature', state: 'cancelled', priority: 'low', reporter: 'clientElevated' },
  { project: 'WEB', title: 'Search results ignore umlauts', kind: 'bug', state: 'todo', priority: 'normal', reporter: 'client', labels: ['backend'], dueInDays: 3 },
  { project: 'WEB', title: 'Footer links point to staging', kind: 'bug', state: 'done', priority: 'urgent', reporter: 'member', assignee: 'member', labels: ['frontend'] },
  { project: 'APP', title: 'Push notifications on Android 15', kind: 'bug', state: 'in_progress', priority: 'high', reporter: 'admin', assignee: 'admin', labels: ['backend'], estimate: 240, dueInDays: 1 },
  { project: 'APP', title: 'Offline mode for the order list', kind: 'feature', state: 'todo', priority: 'normal', reporter: 'admin', estimate: 960 },
  { project: 'APP', title: 'App store screenshots for release 3.2', kind: 'task', state: 'in_review', priority: 'normal', reporter: 'admin', assignee: 'member', labels: ['design'] },
  { project: 'APP', title: 'Crash when rotating on the checkout screen', kind: 'bug', state: 'done', priority: 'urgent', reporter: 'admin', assignee: 'admin', estimate: 120,
    comments: [{ by: 'admin', audience: 'internal', body: 'Root cause: fragment state loss. Patched in 3.1.4.' }] },
  { project: 'APP', title: 'Biometric login', kind: 'feature', state: 'todo', priority: 'low', reporter: 'owner', estimate: 720 },
  { project: 'APP', title: 'Update privacy labels', kind: 'task', state: 'triage', priority: 'normal', reporter: 'owner', dueInDays: 20 },
  { project: 'OPS', title: 'Renew the wildcard TLS certificate', kind: 'task', state: 'todo', priority: 'high', reporter: 'admin', assignee: 'admin', labels: ['infrastructure'], dueInDays: 9 },
  { project: 'OPS', title: 'Quarterly backup restore drill', kind: 'task', state: 'done', priority: 'normal', reporter: 'admin', assignee: 'admin', labels: ['infrastructure'] },
  { project: 'OPS', title: 'Onboard the new designer', kind: 'task', state: 'in_progress', priority: 'normal', reporter: 'owner', assignee: 'owner' },
  { project: 'OPS', title: 'Move billing exports to the new accounting system', kind: 'feature', state: 'todo', priority: 'normal', reporter: 'owner', assignee: 'admin', labels: ['billing'] },
  { project: 'OPS', title: 'Clean up unused cloud buckets', kind: 'task', state: 'cancelled', priority: 'low', reporter: 'admin' },
  { project: 'OPS', title: 'Team offsite agenda', kind: 'task', state: 'todo', priority: 'low', reporter: 'owner', dueInDays: 30 },
  { project: 'INBOX', title: 'Invoice question for October', kind: 'request', state: 'triage', priority: 'normal', reporter: 'clientElevated', source: 'email',
    description: 'Hello, could you break down the October hours per project? Thanks, Carla' },
  { project: 'INBOX', title: 'Website down for some users in Spain?', kind: 'request', state: 'triage', priority: 'urgent', reporter: 'client', source: 'email' },
  { project: 'INBOX', title: 'New landing page for the spring campaign', kind: 'request', state: 'triage', priority: 'normal', reporter: 'clientElevated' },
  { project: 'INBOX', title: 'Dependabot: bump image library', kind: 'task', state: 'triage', priority: 'low', reporter: 'agent', source: 'api' },
  { project: 'WEB', title: 'Translate legal pages to German', kind: 'task', state: 'todo', priority: 'normal', reporter: 'owner', assignee: 'member', dueInDays: 14 },
  { project: 'WEB', title: 'Image CDN cache headers', kind: 'task', state: 'in_review', priority: 'normal', reporter: 'agent', assignee: 'agent', labels: ['infrastructure'] },
  { project: 'APP', title: 'Dark mode polish', kind: 'feature', state: 'in_progress', priority: 'low', reporter: 'admin', assignee: 'member', labels: ['design', 'frontend'] },
  { project: 'WEB', title: 'Analytics consent mode v2', kind: 'request', state: 'todo', priority: 'high', reporter: 'clientElevated', labels: ['customer'], dueInDays: 6 },
];
