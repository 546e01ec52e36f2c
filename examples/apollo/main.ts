/**
 * `npm run example:apollo`: a wallet app's screens with Apollo Client 4 against a running gateway
 * (`npm start` in another terminal); examples/screens.ts says what it shows and reads.
 *
 * Runs on Node 24 (package.json engines): npm scripts take it from node_modules whatever the
 * machine's Node is. `node examples/apollo/main.ts` also works on any Node that runs TypeScript
 * itself (22.18 or later); the WebSocket comes from `ws`, not from Node.
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

await runScreens('Apollo Client', 'WebSocket (graphql-ws)', (gatewayURL, apiKey) => {
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
