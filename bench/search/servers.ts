/**
 * The servers of the frozen search corpus: npm package, corpus name, and the arguments and dummy credentials with which
 * it starts and lists its tools without a real account. Dummy values only: nothing here reaches a real service.
 * Tried and left out (2026-11): server-gitlab (a tool schema the SDK client rejects), server-redis, server-gdrive,
 * @stripe/mcp, @azure-devops/mcp, @bytebase/dbhub, @supabase/mcp-server-supabase, @benborla29/mcp-server-mysql
 * (each needs a reachable service or real credentials before it lists tools).
 */
export interface CorpusServer {
  name: string;
  package: string;
  bin?: string;
  args?: string[];
  env?: Record<string, string>;
}

const DUMMY = 'dummy-token-for-listing-tools';

export const SERVERS: readonly CorpusServer[] = [
  { name: 'everything', package: '@modelcontextprotocol/server-everything', args: ['stdio'] },
  { name: 'memory', package: '@modelcontextprotocol/server-memory', env: { MEMORY_FILE_PATH: '$SCRATCH/memory.json' } },
  { name: 'filesystem', package: '@modelcontextprotocol/server-filesystem', args: ['$SCRATCH'] },
  { name: 'sequential-thinking', package: '@modelcontextprotocol/server-sequential-thinking' },
  { name: 'github', package: '@modelcontextprotocol/server-github', env: { GITHUB_PERSONAL_ACCESS_TOKEN: DUMMY } },
  { name: 'slack', package: '@modelcontextprotocol/server-slack', env: { SLACK_BOT_TOKEN: DUMMY, SLACK_TEAM_ID: 'T0000' } },
  { name: 'postgres', package: '@modelcontextprotocol/server-postgres', args: ['postgresql://localhost:1/none'] },
  { name: 'puppeteer', package: '@modelcontextprotocol/server-puppeteer' },
  { name: 'brave-search', package: '@modelcontextprotocol/server-brave-search', env: { BRAVE_API_KEY: DUMMY } },
  { name: 'google-maps', package: '@modelcontextprotocol/server-google-maps', env: { GOOGLE_MAPS_API_KEY: DUMMY } },
  { name: 'aws-kb', package: '@modelcontextprotocol/server-aws-kb-retrieval', env: { AWS_ACCESS_KEY_ID: DUMMY, AWS_SECRET_ACCESS_KEY: DUMMY, AWS_REGION: 'us-east-1' } },
  { name: 'everart', package: '@modelcontextprotocol/server-everart', env: { EVERART_API_KEY: DUMMY } },
  { name: 'playwright', package: '@playwright/mcp' },
  { name: 'chrome-devtools', package: 'chrome-devtools-mcp' },
  { name: 'context7', package: '@upstash/context7-mcp' },
  { name: 'notion', package: '@notionhq/notion-mcp-server', env: { NOTION_TOKEN: DUMMY } },
  { name: 'mongodb', package: 'mongodb-mcp-server' },
  { name: 'gitlab-community', package: '@zereight/mcp-gitlab', env: { GITLAB_PERSONAL_ACCESS_TOKEN: DUMMY, GITLAB_API_URL: 'http://localhost:1/api/v4' } },
  { name: 'chart', package: '@antv/mcp-server-chart' },
  { name: 'desktop-commander', package: '@wonderwhy-er/desktop-commander' },
  { name: 'playwright-ea', package: '@executeautomation/playwright-mcp-server' },
  { name: 'circleci', package: '@circleci/mcp-server-circleci', env: { CIRCLECI_TOKEN: DUMMY } },
  { name: 'hubspot', package: '@hubspot/mcp-server', env: { PRIVATE_APP_ACCESS_TOKEN: DUMMY } },
  { name: 'kubernetes', package: 'mcp-server-kubernetes' },
  { name: 'git', package: '@cyanheads/git-mcp-server' },
  { name: 'airbnb', package: '@openbnb/mcp-server-airbnb' },
  { name: 'airtable', package: 'airtable-mcp-server', env: { AIRTABLE_API_KEY: DUMMY } },
  { name: 'sentry', package: '@sentry/mcp-server', args: ['--access-token', DUMMY] },
  { name: 'firecrawl', package: 'firecrawl-mcp', env: { FIRECRAWL_API_KEY: 'fc-dummy' } },
  { name: 'tavily', package: 'tavily-mcp', env: { TAVILY_API_KEY: DUMMY } },
  { name: 'exa', package: 'exa-mcp-server', env: { EXA_API_KEY: DUMMY } },
  { name: 'brave', package: '@brave/brave-search-mcp-server', env: { BRAVE_API_KEY: DUMMY } },
  { name: 'figma', package: 'figma-developer-mcp', args: ['--figma-api-key', DUMMY, '--stdio'] },
  { name: 'mobile', package: '@mobilenext/mobile-mcp' },
  { name: 'datadog', package: '@winor30/mcp-server-datadog', env: { DATADOG_API_KEY: DUMMY, DATADOG_APP_KEY: DUMMY } },
  { name: 'launchdarkly', package: '@launchdarkly/mcp-server', args: ['start', '--api-key', DUMMY] },
  { name: 'shopify-dev', package: '@shopify/dev-mcp' },
  { name: 'taskmanager', package: '@kazuph/mcp-taskmanager' },
  { name: 'mapbox', package: '@mapbox/mcp-server', env: { MAPBOX_ACCESS_TOKEN: 'pk.dummy' } },
  { name: 'browser-tools', package: '@agentdeskai/browser-tools-mcp' },
  { name: 'browsermcp', package: '@browsermcp/mcp' },
  { name: 'code-runner', package: 'mcp-server-code-runner' },
  { name: 'ms-365', package: '@softeria/ms-365-mcp-server' },
];
