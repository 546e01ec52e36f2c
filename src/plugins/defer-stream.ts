import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { BREAK, type DocumentNode, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * @defer and @stream (@graphql-yoga/plugin-defer-stream), whose validation rules (and its own
 * OverlappingFieldsCanBeMerged) are added only for documents that use either directive: for the
 * others they check nothing the standard rules do not, and adding them to every request cost
 * about 2 % of a cheap query's CPU (a profile of S1). Whether a document uses them is remembered
 * per parsed document (Yoga's parser cache hands out one object per query text).
 */
export function useIncrementalDelivery(): Plugin {
  const plugin = useDeferStream() as Plugin;
  const onValidate = plugin.onValidate;
  const incremental = new WeakMap<DocumentNode, boolean>();
  const usesIncremental = (document: DocumentNode) => {
    let uses = incremental.get(document);
    if (uses === undefined) {
      uses = false;
      visit(document, {
        Directive(node) {
          if (node.name.value === 'defer' || node.name.value === 'stream') {
            uses = true;
            return BREAK;
          }
          return undefined;
        },
      });
      incremental.set(document, uses);
    }
    return uses;
  };
  return {
    ...plugin,
    ...(onValidate && {
      onValidate(payload) {
        if (usesIncremental(payload.params.documentAST)) return onValidate(payload);
        return undefined;
      },
    }),
  };
}
