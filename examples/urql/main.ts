/**
 * `npm run example:urql`: a wallet app's screens with urql and graphcache against a running gateway
 * (`npm start` in another terminal); examples/screens.ts says what it shows and reads.
 *
 * Runs on Node 24 (package.json engines): npm scripts take it from node_modules whatever the
 * machine's Node is. `node examples/urql/main.ts` also works on any Node that runs TypeScript
 * itself (22.18 or later).
 */
import { runScreens } from '../screens.ts';
import {
  createWalletClient,
  loadActivity,
  loadDashboard,
  loadWalletScreen,
  watchWithdrawal,
  withdraw,
} from './wallet-client.ts';

await runScreens('urql', 'SSE (graphql-sse)', (gatewayURL, apiKey) => {
  const { client, close } = createWalletClient(gatewayURL, apiKey);
  return {
    loadDashboard: () => loadDashboard(client),
    loadWalletScreen: (id, show) => loadWalletScreen(client, id, show),
    loadActivity: (pageSize, pages) => loadActivity(client, pageSize, pages),
    withdraw: (input) => withdraw(client, input),
    watchWithdrawal: (id, show) => watchWithdrawal(client, id, show),
    close,
  };
});
