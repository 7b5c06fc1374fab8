/**
 * Search's ranking figures (README "Search"): the fields a tool is indexed by and every weight of the ranking, with the
 * defaults. Kept apart from the ranking itself (search.ts) so both stay readable.
 */

/**
 * The fields a tool is indexed by (README: "Search"), each with its BM25F weight and length normalisation `b`.
 * The name says most; the description's first sentence says what the tool does, the rest says how; parameter text
 * and the server's and toolbox's descriptions only tell the neighbourhood. Figures tuned on the tuning part of the
 * search benchmark (bench/search), never on its held-out part.
 */
export const FIELDS = ['name', 'title', 'summary', 'description', 'parameters', 'parameterText', 'server', 'toolbox'] as const;
export type Field = (typeof FIELDS)[number];

export interface RankingParams {
  weights: Record<Field, number>;
  b: Record<Field, number>;
  k1: number;
  /** Extra factor for the share of the tool's name words that the query names. */
  nameCoverage: number;
  /**
   * Factor for a tool marked destructive (`annotations.destructiveHint`) whose action — its name's first word, such
   * as `drop` or `delete` — the query does not name, as written or through a bridge: it loses a near tie to a tool
   * that only reads ("what databases are there": list-databases before drop-database). 1 turns it off.
   */
  destructiveUnnamed: number;
  /** Weight of a term reached by prefix (the last query word still being typed) or by a typo, against an exact one. */
  prefixWeight: number;
  typoWeight: number;
  /** Pseudo-relevance feedback: terms taken from the first pass's top tools, and their weight (0 turns it off). */
  feedbackDocs: number;
  feedbackTerms: number;
  feedbackWeight: number;
  /** Weight of a name word reached through the vocabulary bridge, times the bridge's strength (0 turns it off). */
  bridgeWeight: number;
  /** Weight of an index word reached through the English bridge, times its cosine to the query word (0 turns it off). */
  englishWeight: number;
  /** A query word in at most this many tools also reaches its English neighbours (0: only words no tool has). */
  englishMaxDf: number;
  /**
   * How much closeness in meaning counts beside the words: a matching tool's score is its word score over the best
   * one's (or over the floor, see `wordScoreFloor`), plus this times the cosine between the query's and the tool's
   * meaning (search-meaning; 0 turns it off).
   */
  meaningWeight: number;
  /**
   * How much the query's closeness in meaning to a tool's server counts: a matching tool also gets this times the
   * cosine between the query's meaning and its server's (the mean of the server's tools' meanings; 0 turns it off). It
   * tells servers apart, so it changes nothing inside a toolbox of one server.
   */
  serverMeaningWeight: number;
  /**
   * When even the best match is weak, words count for less beside meaning: a matching tool's word score is taken out of
   * the larger of the best one's and this share of the sum of the query words' idf (a word no tool has counted as the
   * rarest). A query some tool matches well is ranked as before; one no tool matches well (a word no tool has, words
   * spread over several tools or found only in descriptions) is decided more by meaning. In "which XHR calls did the
   * page make" no tool has "XHR", and the best match by words (a screenshot tool, by "page") says little, so the
   * network-requests tool, nearest in meaning, comes first (0 turns it off: out of the best one's alone).
   */
  wordScoreFloor: number;
  /**
   * When some tools match a word, this many more that match none may compete by meaning alone (word score 0): the
   * nearest the query with a cosine of at least `meaningCandidateMin` (0 turns it off). "draw a picture of a sunset"
   * finds an image generator among tools that share "picture" or "draw".
   */
  meaningCandidates: number;
  meaningCandidateMin: number;
  /**
   * An answer with fewer tools than asked for is topped up with the tools nearest the query in meaning whose cosine is
   * at least this by the domain vectors (search-meaning; Infinity turns it off), or, when those find none, at least
   * `englishMeaningMin` by the general-English ones.
   */
  meaningMin: number;
  englishMeaningMin: number;
}

export const DEFAULT_PARAMS: RankingParams = {
  weights: { name: 3, title: 1.125, summary: 2, description: 0.5, parameters: 0.75, parameterText: 0.4, server: 1, toolbox: 0.375 },
  b: { name: 0, title: 0.125, summary: 0.5, description: 0.125, parameters: 1, parameterText: 0.75, server: 0, toolbox: 0.3 },
  k1: 1.2,
  nameCoverage: 0.5,
  destructiveUnnamed: 0.95,
  prefixWeight: 1,
  typoWeight: 0.15,
  feedbackDocs: 3,
  feedbackTerms: 4,
  feedbackWeight: 0,
  bridgeWeight: 0.075,
  englishWeight: 0.2,
  englishMaxDf: 0,
  meaningWeight: 2,
  serverMeaningWeight: 1,
  wordScoreFloor: 0.4,
  meaningCandidates: 5,
  meaningCandidateMin: 0.3,
  meaningMin: 0.15,
  englishMeaningMin: 0.3,
};
