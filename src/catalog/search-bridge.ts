import { DEFAULT_ENGLISH, englishBridge, shippedEnglishVectors, type EnglishBridge, type EnglishParams, type EnglishVectors } from './search-english.js';
import { fieldCount, type SearchIndex } from './search-index.js';

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
}

export interface BridgeParams {
  /** Least number of servers with a tool whose text has the word and whose name has the name word. */
  minTools: number;
  /** Most name words one word leads to. */
  maxRelated: number;
  english: EnglishParams;
}

export const DEFAULT_BRIDGE: BridgeParams = { minTools: 2, maxRelated: 3, english: DEFAULT_ENGLISH };

/** Fields (by position in FIELDS) that count as a tool's text, and as its name. */
const TEXT_FIELDS = [1, 2, 3, 4, 5];
const NAME_FIELD = 0;

/**
 * Builds the bridge from every index given (all catalogs known); cost linear in the postings. `english` is the
 * general-English vectors of the English bridge: by default the shipped ones (read on first use), `null` for none.
 */
export function buildBridge(
  indexes: readonly SearchIndex[],
  params: BridgeParams = DEFAULT_BRIDGE,
  english: EnglishVectors | null = shippedEnglishVectors(),
): Bridge {
  const docs = docsOf(indexes);
  const related = new Map<string, { term: string; strength: number }[]>();
  for (const [t, candidates] of candidatesOf(docs, params)) {
    candidates.sort((a, b) => b.strength - a.strength || (a.term < b.term ? -1 : 1));
    related.set(t, candidates.slice(0, params.maxRelated));
  }
  return english ? { related, english: englishBridge(english, indexes, params.english) } : { related };
}

/** Per doc (numbered across indexes): its name terms, its text terms, and its toolbox/server. */
interface Docs {
  names: string[][];
  texts: string[][];
  servers: string[];
}

function docsOf(indexes: readonly SearchIndex[]): Docs {
  let offset = 0;
  const names: string[][] = [];
  const texts: string[][] = [];
  const servers: string[] = [];
  for (const index of indexes) {
    for (const doc of index.docs) servers.push(`${doc.entry.toolbox_name}/${doc.entry.source_server}`);
    for (const [term, p] of index.postings) {
      for (let i = 0; i < p.docs.length; i++) {
        const id = offset + p.docs[i]!;
        if (fieldCount(p.tf[i]!, NAME_FIELD) > 0) (names[id] ??= []).push(term);
        else if (TEXT_FIELDS.some((f) => fieldCount(p.tf[i]!, f) > 0)) (texts[id] ??= []).push(term);
      }
    }
    offset += index.docs.length;
  }
  return { names, texts, servers };
}

/** Per text word: the name words it leads to (unsorted, uncut), from the servers that pair them. */
function candidatesOf({ names, texts, servers }: Docs, params: BridgeParams): Map<string, { term: string; strength: number }[]> {
  const textDf = new Map<string, number>();
  const textServers = new Map<string, Set<string>>();
  const nameDf = new Map<string, number>();
  // Pairs count once per server, not per tool: a server that repeats its own prefix in every tool name (`hubspot-…`)
  // or a word in every description must not make a bridge by itself.
  const co = new Map<string, Map<string, Set<string>>>();
  for (let id = 0; id < servers.length; id++) {
    const ns = names[id] ?? [];
    for (const n of ns) nameDf.set(n, (nameDf.get(n) ?? 0) + 1);
    for (const t of texts[id] ?? []) {
      textDf.set(t, (textDf.get(t) ?? 0) + 1);
      let ts = textServers.get(t);
      if (!ts) textServers.set(t, (ts = new Set()));
      ts.add(servers[id]!);
      if (ns.length === 0) continue;
      let m = co.get(t);
      if (!m) co.set(t, (m = new Map()));
      for (const n of ns) {
        let where = m.get(n);
        if (!where) m.set(n, (where = new Set()));
        where.add(servers[id]!);
      }
    }
  }
  const total = Math.max(1, servers.length);
  const out = new Map<string, { term: string; strength: number }[]>();
  for (const [t, m] of co) {
    const df = textDf.get(t)!;
    const candidates: { term: string; strength: number }[] = [];
    for (const [n, where] of m) {
      const c = where.size;
      if (c < params.minTools) continue;
      // How much more often the name word goes with this word than with any tool: lift, damped by evidence.
      const lift = (c / df) / (nameDf.get(n)! / total);
      if (lift <= 2) continue;
      // Share of the servers using the word that pair it with the name word, damped where the pairing is barely
      // more frequent than chance.
      candidates.push({ term: n, strength: (c / textServers.get(t)!.size) * Math.min(1, Math.log(lift) / Math.log(20)) });
    }
    if (candidates.length > 0) out.set(t, candidates);
  }
  return out;
}
