import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import './scalars.ts';
import './enums.ts';
import './types/transaction.ts';
import './types/wallet.ts';
import './types/deposit.ts';
import './types/withdrawal-intent.ts';

/** The gateway's schema, built once per process and sorted like the checked-in SDL. */
export const schema = lexicographicSortSchema(builder.toSchema());
