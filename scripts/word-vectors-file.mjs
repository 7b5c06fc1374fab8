/**
 * The word-vector file format search reads (src/catalog/word-vectors.ts), written in one place for both build scripts
 * (build-english-vectors.mjs, build-domain-vectors.mjs). Little-endian: "WBEV", u32 version (1), u32 word count N,
 * u32 dimensions D, u32 byte length L of the words; L bytes of UTF-8 words joined by "\n"; zero padding to a multiple
 * of 4; N float32 scales; N × D int8. Each vector is made unit length and quantised to int8 with its own scale.
 *
 * @param {readonly string[]} words the words, most frequent first
 * @param {number} dims
 * @param {(word: string, row: number) => readonly number[]} vectorOf a word's vector (any length scale)
 * @returns {Buffer}
 */
export function wordVectorsFile(words, dims, vectorOf) {
  const bytes = Buffer.from(words.join('\n'), 'utf8');
  const padded = Math.ceil(bytes.length / 4) * 4;
  const header = 20;
  const buffer = Buffer.alloc(header + padded + words.length * 4 + words.length * dims);
  buffer.write('WBEV', 0, 'latin1');
  buffer.writeUInt32LE(1, 4);
  buffer.writeUInt32LE(words.length, 8);
  buffer.writeUInt32LE(dims, 12);
  buffer.writeUInt32LE(bytes.length, 16);
  bytes.copy(buffer, header);
  const scalesAt = header + padded;
  const vectorsAt = scalesAt + words.length * 4;
  words.forEach((word, row) => {
    const v = vectorOf(word, row);
    const norm = Math.hypot(...v) || 1;
    const unit = v.map((x) => x / norm);
    const scale = Math.fround(Math.max(...unit.map(Math.abs)) / 127 || 1);
    buffer.writeFloatLE(scale, scalesAt + row * 4);
    for (let d = 0; d < dims; d++) buffer.writeInt8(Math.max(-127, Math.min(127, Math.round(unit[d] / scale))), vectorsAt + row * dims + d);
  });
  return buffer;
}
