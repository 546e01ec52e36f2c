/**
 * `npm run example:relay`: a wallet app's screens with relay-runtime (no React) against a running
 * gateway (`npm start` in another terminal); examples/screens.ts says what it shows and reads.
 *
 * DOCUMENT_IDS=1 sends each operation by its persisted-query id alone, for a gateway started with
 * `PERSISTED_DOCUMENTS=examples/relay/generated/persisted-queries.json` (docs/clients.md, Relay).
 *
 * The script runs `node --import ./examples/relay/resolve-artifacts.ts examples/relay/main.ts`: the
 * hook resolves the artifacts' extensionless imports, as a bundler does.
 */
import { runScreens, type WalletScreens } from '../screens.ts';
import type { CreateWithdrawalIntentInput } from './generated/WithdrawScreenMutation.graphql.ts';
import {
  createWalletClient,
  loadActivity,
  loadDashboard,
  loadWalletScreen,
  type WalletScreen,
  watchWithdrawal,
  withdraw,
} from './wallet-client.ts';

await runScreens('Relay', 'SSE (fetch)', (gatewayURL, apiKey) => {
  const { environment, close } = createWalletClient(gatewayURL, apiKey, {
    documentIds: process.env.DOCUMENT_IDS === '1',
  });
  // relay-compiler types its data readonly; the printer only reads it.
  const screens = {
    loadDashboard: () => loadDashboard(environment),
    // The balances when they come, then the whole screen (not each list as it comes).
    loadWalletScreen: (id: string, show: (screen: WalletScreen) => void) => {
      let shown = false;
      return loadWalletScreen(environment, id, (screen) => {
        if (screen.complete || !shown) show(screen);
        shown = true;
      });
    },
    loadActivity: (pageSize: number, pages: number) => loadActivity(environment, pageSize, pages),
    withdraw: (input: CreateWithdrawalIntentInput) => withdraw(environment, input),
    watchWithdrawal: (id: string, show: (intent: { status: string; updatedAt: string }) => void) =>
      watchWithdrawal(environment, id, show),
    close,
  };
  return screens as unknown as WalletScreens;
});
