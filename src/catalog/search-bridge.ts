import { DEFAULT_ENGLISH, englishBridge, type EnglishBridge, type EnglishParams } from './search-english.js';
import { shippedVectors, type WordVectors } from './word-vectors.js';
import { FIELD_PLACE, type SearchIndex } from './search-index.js';
import { wordCount, wordId, wordOf } from './search-text.js';

/**
 * The vocabulary bridge (README: "Search"): words people use for a tool's job, learnt offline from the catalogs
 * themselves. Across every tool seen, a word of a tool's description or parameters "points to" the words of that
 * tool's name; a word that points to the same name word from several tools becomes a way to reach that name word.
 * So "folder" reaches `directory` when descriptions of directory tools say "folder", whichever server they come from.
 * No word list is written by hand.
 */
export interface Bridge {
  /** For an index term: name terms it leads to, with a strength in (0, 1]. */
  related: ReadonlyMap<string, readonly { term: string; strength: number }[]>;
  /** General-English neighbours of query words among the index terms (absent when the vectors could not be read). */
  english?: EnglishBridge;
  /** The domain word vectors that say how close a query and a tool are in meaning (absent when they could not be read). */
  meaning?: WordVectors;
}

export interface BridgeParams {
  /** Least number of servers with a tool whose text has the word and whose name has the name word. */
  minTools: number;
  /** Most name words one word leads to. */
  maxRelated: number;
  english: EnglishParams;
}

export const DEFAULT_BRIDGE: BridgeParams = { minTools: 2, maxRelated: 3, english: DEFAULT_ENGLISH };

/** Packed field counts (see search-index) of the name field, and of the fields that count as a tool's text (1–5). */
const NAME_PLACE = FIELD_PLACE[1]!;
const TEXT_PLACES = FIELD_PLACE[6]! / FIELD_PLACE[1]!;

/**
 * Builds the bridge from every index given (all catalogs known); cost linear in the postings. `english` is the
 * general-English vectors of the English bridge and `meaning` the domain vectors of closeness in meaning: by default
 * the shipped ones (read on first use), `null` for none.
 */
export function buildBridge(
  indexes: readonly SearchIndex[],
  params: BridgeParams = DEFAULT_BRIDGE,
  english: WordVectors | null = shippedVectors('english'),
  meaning: WordVectors | null = shippedVectors('domain'),
): Bridge {
  const docs = docsOf(indexes);
  const related = new Map<string, { term: string; strength: number }[]>();
  for (const [t, candidates] of candidatesOf(docs, params)) {
    candidates.sort((a, b) => b.strength - a.strength || (a.term < b.term ? -1 : 1));
    related.set(t, candidates.slice(0, params.maxRelated));
  }
  return { related, ...(english && { english: englishBridge(english, indexes, params.english) }), ...(meaning && { meaning }) };
}

/** Per doc (numbered across indexes): its name and text terms by word number, and its server. */
interface Docs {
  names: number[][];
  texts: number[][];
  /** Each doc's server (`toolbox/server`) as a number. */
  servers: Int32Array;
}

function docsOf(indexes: readonly SearchIndex[]): Docs {
  let offset = 0;
  const names: number[][] = [];
  const texts: number[][] = [];
  const serverNumbers = new Map<string, number>();
  const servers: number[] = [];
  for (const index of indexes) {
    for (const doc of index.docs) {
      const key = `${doc.entry.toolbox_name}/${doc.entry.source_server}`;
      let n = serverNumbers.get(key);
      if (n === undefined) serverNumbers.set(key, (n = serverNumbers.size));
      servers.push(n);
    }
    for (const [term, k] of index.postings) {
      const t = wordId(term);
      for (let i = index.starts[k]!, end = index.starts[k + 1]!; i < end; i++) {
        const id = offset + index.postingDocs[i]!;
        const packed = index.postingTf[i]!;
        if (packed % NAME_PLACE > 0) (names[id] ??= []).push(t);
        else if (Math.floor(packed / NAME_PLACE) % TEXT_PLACES > 0) (texts[id] ??= []).push(t);
      }
    }
    offset += index.docs.length;
  }
  return { names, texts, servers: Int32Array.from(servers) };
}

/** A pair (text word, name word) as one number: word numbers stay far below 2^21. */
const PAIR = 2 ** 21;

/**
 * Per text word: the name words it leads to (unsorted, uncut), from the servers that pair them. Counts are of servers,
 * not tools: a server that repeats its own prefix in every tool name (`hubspot-…`) or a word in every description must
 * not make a bridge by itself. Docs are visited server by server, so "a new server" is "not the last one counted".
 */
function candidatesOf({ names, texts, servers }: Docs, params: BridgeParams): Map<string, { term: string; strength: number }[]> {
  const size = wordCount();
  const textDf = new Int32Array(size);
  const nameDf = new Int32Array(size);
  const textServers = new Int32Array(size);
  const textLast = new Int32Array(size).fill(-1);
  const pairs = new Map<number, number>();
  const pairServers: number[] = [];
  const pairLast: number[] = [];
  // Server by server (catalogs list a server's tools together already; this keeps the count right if one did not).
  const order = Array.from(servers.keys()).sort((a, b) => servers[a]! - servers[b]! || a - b);
  for (const id of order) {
    const server = servers[id]!;
    const ns = names[id] ?? [];
    for (const n of ns) nameDf[n]!++;
    for (const t of texts[id] ?? []) {
      textDf[t]!++;
      if (textLast[t] !== server) {
        textLast[t] = server;
        textServers[t]!++;
      }
      for (const n of ns) {
        const key = t * PAIR + n;
        let at = pairs.get(key);
        if (at === undefined) {
          pairs.set(key, (at = pairServers.length));
          pairServers.push(0);
          pairLast.push(-1);
        }
        if (pairLast[at] !== server) {
          pairLast[at] = server;
          pairServers[at]!++;
        }
      }
    }
  }
  const total = Math.max(1, servers.length);
  const out = new Map<string, { term: string; strength: number }[]>();
  for (const [key, at] of pairs) {
    const c = pairServers[at]!;
    if (c < params.minTools) continue;
    const t = Math.floor(key / PAIR);
    const n = key - t * PAIR;
    // How much more often the name word goes with this word than with any tool: lift, damped by evidence.
    const lift = c / textDf[t]! / (nameDf[n]! / total);
    if (lift <= 2) continue;
    // Share of the servers using the word that pair it with the name word, damped where the pairing is barely
    // more frequent than chance.
    const candidate = { term: wordOf(n), strength: (c / textServers[t]!) * Math.min(1, Math.log(lift) / Math.log(20)) };
    const word = wordOf(t);
    const list = out.get(word);
    if (list) list.push(candidate);
    else out.set(word, [candidate]);
  }
  return out;
}
