import { getOperationAST, type OperationDefinitionNode, parse } from 'graphql';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER, exampleOperations } from '../../src/process/graphiql-tabs.ts';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { DEMO_KEYS } from '../../src/sandbox/seed.ts';
import { globalIdOf } from '../../src/schema/global-ids.ts';
import { launchChromium } from '../support/chromium.ts';
import { parseMetrics, sampleSum } from '../support/metrics.ts';
import { startProcess } from '../support/process.ts';
import { captureProcessOutput } from '../support/suite-logs.ts';

/**
 * GraphiQL as a person uses it: `npm start` as its own process, the page in headless Chromium,
 * every tab clicked and run (Ctrl+Enter), its answer read from the result pane. GraphiQL sends
 * through its own transport (queries as JSON POSTs, subscriptions as GETs asking for
 * `text/event-stream`, the key from its Headers pane), which is what this test holds, rather than
 * the suite's own helpers.
 */

interface ExampleTab {
  name: string;
  operation: OperationDefinitionNode;
}

const examples: ExampleTab[] = exampleOperations().map(({ file, name, text }) => {
  const operation = getOperationAST(parse(text));
  if (!operation?.name) throw new Error(`${file}: an example is one named operation`);
  return { name, operation };
});

/** The window a newcomer's laptop gives the page. */
const VIEWPORT = { width: 1280, height: 800 };

type Started = Awaited<ReturnType<typeof startProcess>>;
let app: Started;
let sandboxURL: string;
let browser: Browser;
let page: Page;

const demoKey = DEMO_KEYS.acmeReadWrite;

async function gateway(query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${demoKey}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (body.errors) throw new Error(`the gateway refused: ${JSON.stringify(body.errors)}`);
  return body.data as Record<string, unknown>;
}

/** What the result pane shows, without the editor's line breaks and indentation. */
async function pane(): Promise<string> {
  return ((await page.textContent('.graphiql-response')) ?? '').replace(/\s+/g, '');
}

async function waitForPane(test: (text: string) => boolean, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let text = await pane();
  while (!test(text)) {
    if (Date.now() > deadline) throw new Error(`the result pane never showed ${what}; it shows: ${text}`);
    await page.waitForTimeout(200);
    text = await pane();
  }
  return text;
}

/**
 * Records every text the result pane shows from now on: a stream replaces one event by the next,
 * and the sandbox's own news (demo intents moving on) may follow the test's within one look.
 * Returns a wait for the first recorded text that passes `test`.
 */
async function recordPane(): Promise<
  (test: (text: string) => boolean, what: string, timeoutMs?: number) => Promise<string>
> {
  await page.evaluate(() => {
    const w = window as unknown as { paneTexts: string[] };
    w.paneTexts = [];
    const target = document.querySelector('.graphiql-response');
    if (!target) throw new Error('no result pane');
    new MutationObserver(() => w.paneTexts.push(target.textContent ?? '')).observe(target, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  return async (test, what, timeoutMs = 45_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const texts = (await page.evaluate(() => (window as unknown as { paneTexts: string[] }).paneTexts)).map(
        (text) => text.replace(/\s+/g, ''),
      );
      const found = texts.find(test);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`the result pane never showed ${what}; it showed: ${texts.slice(-3).join(' | ')}`);
      }
      await page.waitForTimeout(200);
    }
  };
}

const tabButton = (name: string) =>
  page.locator('[id^="graphiql-session-tab-"]', { hasText: new RegExp(`^${name}$`) });

/** Selects a tab by its operation's name (a headless click may need a second one). */
async function select(name: string): Promise<void> {
  const editor = page.locator('.graphiql-query-editor');
  for (let attempt = 0; ; attempt += 1) {
    await tabButton(name).click();
    const text = (await editor.textContent()) ?? '';
    if (new RegExp(`(query|mutation|subscription)\\s*${name}\\b`).test(text.replace(/\u00a0/g, ' '))) break;
    if (attempt === 5) throw new Error(`the ${name} tab cannot be selected; the editor shows: ${text}`);
    await page.waitForTimeout(200);
  }
}

/**
 * The operation name a request of GraphiQL's asks the gateway to run (from its JSON body, or from
 * the URL of a subscription's GET); null when it names none; undefined when it runs nothing of
 * the tabs' (the page itself, GraphiQL's introspection).
 */
function operationNameOf(request: Request): string | null | undefined {
  const url = new URL(request.url());
  if (!url.pathname.endsWith('/graphql')) return undefined;
  let params: { query?: unknown; operationName?: unknown } = Object.fromEntries(url.searchParams);
  if (request.method() === 'POST') {
    try {
      params = request.postDataJSON() ?? {};
    } catch {
      return undefined;
    }
  }
  if (typeof params.query !== 'string' || params.query.includes('IntrospectionQuery')) return undefined;
  return typeof params.operationName === 'string' ? params.operationName : null;
}

/** Selects a tab and runs it; resolves once GraphiQL has sent that tab's operation. */
async function run(name: string): Promise<void> {
  await select(name);
  for (let attempt = 0; ; attempt += 1) {
    // GraphiQL takes the operation's name from the editor after a short debounce: run sooner and
    // it asks for the previous tab's operation ("Cannot infer operation"), as a person never would.
    // A busy machine may take longer than this wait: the request it sent tells, and it runs again.
    await page.waitForTimeout(600);
    const sent = page
      .waitForRequest((request) => operationNameOf(request) !== undefined, { timeout: 5_000 })
      .catch(() => null);
    await page.locator('.graphiql-query-editor').click();
    await page.keyboard.press('Control+Enter');
    const request = await sent;
    // No name: the document's one operation, this tab's (select checked the editor shows it).
    const asked = request ? operationNameOf(request) : undefined;
    if (asked === name || asked === null) return;
    if (attempt === 5) throw new Error(`the ${name} tab never ran; GraphiQL last asked for ${asked}`);
  }
}

/** One of the gateway's metrics (on its own port in development), summed over the samples with `labels`. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const response = await fetch(`${app.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return sampleSum(parseMetrics(await response.text()), name, labels);
}

/**
 * Whether a person sees the tab: its box lies inside the window, and what the page shows at its
 * centre is the tab itself (not clipped by the tab bar's hidden scroll, nor under another pane).
 */
async function inView(name: string): Promise<boolean> {
  const box = await tabButton(name).boundingBox();
  if (!box) return false;
  const inside =
    box.x >= 0 && box.y >= 0 && box.x + box.width <= VIEWPORT.width && box.y + box.height <= VIEWPORT.height;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const hit = await page.evaluate(
    ([px, py, label]) =>
      document.elementFromPoint(px, py)?.closest('[id^="graphiql-session-tab-"]')?.textContent === label,
    [x, y, name] as const,
  );
  return inside && hit;
}

/**
 * For each subscription field a tab may use: something that happens meanwhile, and how its news
 * looks in the pane. A new subscription example without an entry here fails the test.
 */
const news: Record<string, () => Promise<(pane: string) => boolean>> = {
  // A withdrawal made meanwhile (by another screen of the same merchant).
  withdrawalIntentsUpdated: async () => {
    const intent = await createWithdrawal();
    return (text) => text.includes(`"id":"${intent}"`);
  },
  // The tab's demo intent is in flight: the sandbox moves it on by itself.
  withdrawalIntentUpdated: async () => {
    const first = await waitForPane((text) => /"status":"[A-Z]+"/.test(text), 'a status');
    const status = /"status":"([A-Z]+)"/.exec(first)?.[1];
    return (text) => /"status":"([A-Z]+)"/.exec(text)?.[1] !== status;
  },
  // A deposit received meanwhile on one of the merchant's wallets.
  depositsUpdated: async () => {
    const deposit = await receiveDeposit();
    return (text) => text.includes(`"id":"${deposit}"`);
  },
};

/** The feed (the metrics' `feed` label) each subscription field polls. */
const feeds: Record<string, string> = {
  withdrawalIntentsUpdated: 'withdrawal_intents',
  withdrawalIntentUpdated: 'withdrawal_intent',
  depositsUpdated: 'deposits',
};

async function firstWalletId(): Promise<string> {
  const data = (await gateway('{ wallets(first: 1) { nodes { id restId } } }')) as {
    wallets: { nodes: { id: string; restId: string }[] };
  };
  const wallet = data.wallets.nodes[0];
  if (!wallet) throw new Error('the demo merchant has no wallet');
  return wallet.restId;
}

async function createWithdrawal(): Promise<string> {
  const data = (await gateway(
    `mutation ($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
      __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id } } } }`,
    {
      input: {
        walletId: globalIdOf('Wallet', await firstWalletId()),
        serviceFeeMode: 'EXCLUSIVE',
        currencyCode: 'USDT',
        amount: '1.00',
        destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
      },
    },
  )) as { createWithdrawalIntent: { withdrawalIntent?: { id: string } } };
  const id = data.createWithdrawalIntent.withdrawalIntent?.id;
  if (!id) throw new Error(`the withdrawal was refused: ${JSON.stringify(data)}`);
  return id;
}

async function receiveDeposit(): Promise<string> {
  const response = await fetch(`${sandboxURL}/sandbox/v1/wallets/${await firstWalletId()}/deposits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
    body: JSON.stringify({ amount: '12.5', status: 'pending' }),
  });
  const body = (await response.json()) as { data?: { id: string } };
  if (!body.data) throw new Error(`the sandbox refused the deposit: ${JSON.stringify(body)}`);
  return globalIdOf('Deposit', body.data.id);
}

beforeAll(async () => {
  app = await startProcess(
    'src/main.ts',
    [],
    { PORT: '0', NODE_ENV: 'development' },
    /gateway: (http:\/\/\S+)\/graphql/,
  );
  sandboxURL = /embedded sandbox at (http:\/\/\S+)\/external\/v1/.exec(app.output())?.[1] ?? '';
  browser = await launchChromium();
  page = await browser.newPage({ viewport: VIEWPORT });
  await page.goto(`${app.url}/graphql`);
  await page.waitForSelector('.graphiql-query-editor', { timeout: 30_000 });
});

afterAll(async () => {
  await browser?.close();
  if (app && app.child.exitCode === null) app.child.kill('SIGKILL');
  if (app) captureProcessOutput('npm start (GraphiQL in a browser)', app.output());
});

describe('GraphiQL in Chromium, against npm start', () => {
  it('opens with one tab per example operation, the demo key in its headers', async () => {
    const tabs = await page.locator('[id^="graphiql-session-tab-"]').allTextContents();
    expect(tabs).toEqual([...EXAMPLE_ORDER]);
    await page
      .getByRole('button', { name: /headers/i })
      .first()
      .click();
    const headers = (await page.locator('.graphiql-editor-tool').textContent()) ?? '';
    expect(headers.replace(/\s+/g, '')).toContain(`"Authorization":"Bearer${demoKey}"`);
  });

  it('shows every tab at 1280×800, the Dashboard open first, and each click opens its operation', async () => {
    await expect
      .poll(() => page.locator('.graphiql-tab-active [id^="graphiql-session-tab-"]').textContent())
      .toBe('Dashboard');
    const editor = ((await page.locator('.graphiql-query-editor').textContent()) ?? '').replace(
      /\u00a0/g,
      ' ',
    );
    expect(editor).toMatch(/query\s*Dashboard\b/);
    // Its first lines say where the demo wallets' balances and refusals are written down.
    expect(editor).toContain('docs/sandbox.md, "Demo wallets"');
    // GraphiQL animates its tabs into place: wait until each has settled where it is seen, or fail.
    const hidden = async () => {
      const names: string[] = [];
      for (const name of EXAMPLE_ORDER) if (!(await inView(name))) names.push(name);
      return names;
    };
    await expect.poll(hidden).toEqual([]);
    for (const name of EXAMPLE_ORDER) {
      await select(name);
      expect(await page.locator('.graphiql-tab-active [id^="graphiql-session-tab-"]').textContent()).toBe(
        name,
      );
    }
  });

  for (const example of examples.filter((e) => e.operation.operation !== 'subscription')) {
    it(`runs the ${example.name} tab: data, no errors`, async () => {
      await run(example.name);
      const root = (example.operation.selectionSet.selections[0] as { name: { value: string } }).name.value;
      const text = await waitForPane((t) => t.startsWith('{'), 'an answer');
      expect(text).toMatch(new RegExp(`^\\{"data":\\{"${root}":`));
      expect(text).not.toContain('"errors"');
      if (example.name === 'CreateWithdrawal') expect(text).toContain('CreateWithdrawalIntentSuccess');
    });
  }

  for (const example of examples.filter((e) => e.operation.operation === 'subscription')) {
    it(`runs the ${example.name} tab: it shows news made meanwhile`, async () => {
      const root = (example.operation.selectionSet.selections[0] as { name: { value: string } }).name.value;
      const makeNews = news[root];
      const feed = feeds[root];
      if (!makeNews || !feed)
        throw new Error(`no news maker or feed for the subscription field ${root}: add them above`);
      const open = () => metric('gateway_subscriptions_active', { feed });
      const polls = () => metric('gateway_subscription_polls_total', { feed });
      const openBefore = await open();
      await run(example.name);
      // News is what changes after the subscription has its first state: once it is open, a poll
      // of its feed shows that state is taken (a poll runs only once its poller has it).
      await expect.poll(open, { timeout: 20_000, interval: 200 }).toBeGreaterThan(openBefore);
      const pollsBefore = await polls();
      await expect.poll(polls, { timeout: 20_000, interval: 200 }).toBeGreaterThan(pollsBefore);
      const seen = await recordPane();
      // The pane draws one event at a time: news that lands in one render with another item's
      // (a demo deposit moving on) is never drawn. A list's news can be made again: up to three
      // items, any of which must show; the one intent's news is its own next status.
      const repeatable = root !== 'withdrawalIntentUpdated';
      const made: ((pane: string) => boolean)[] = [];
      let text: string | undefined;
      for (let attempt = 1; text === undefined; attempt++) {
        made.push(await makeNews());
        const last = !repeatable || attempt === 3;
        text = await seen(
          (pane) => made.some((shows) => shows(pane)),
          `the news of ${root}`,
          last ? 45_000 : 15_000,
        ).catch((error: unknown) => {
          if (last) throw error;
          return undefined;
        });
      }
      expect(text).toMatch(new RegExp(`^\\{"data":\\{"${root}":\\{`));
      expect(text).not.toContain('"errors"');
    });
  }
});
