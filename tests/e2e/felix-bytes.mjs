// Felix format bytes for the browser tests and the page bench, written the
// way docs/storage-format.md lays them out (big-endian, CRC-32 of zlib):
// the one place these scripts make a segment header or a record.
import { crc32 } from 'node:zlib';

export const SEGMENT_HEADER_BYTES = 32;
export const RECORD_HEADER_BYTES = 28;

// A segment header: magic "FLSG", version 2, `base` offset, generation 1, its CRC.
export function segmentHeader(base = 0n) {
  const header = Buffer.alloc(SEGMENT_HEADER_BYTES);
  header.write('FLSG', 0); header.writeUInt16BE(2, 4); header.writeBigUInt64BE(BigInt(base), 8); header.writeBigUInt64BE(1n, 16);
  header.writeUInt32BE(crc32(header.subarray(0, 24)), 24);
  return header;
}

// A record's 28-byte header written at `at` of `buf`: payload length,
// offset, timestamp (micros), the header CRC and the record CRC over
// `payload` (whose bytes the caller places after it, or not).
export function recordHeaderInto(buf, at, offset, timestamp, payload) {
  const h = buf.subarray(at, at + RECORD_HEADER_BYTES);
  h.writeUInt32BE(payload.length, 0); h.writeBigUInt64BE(BigInt(offset), 4); h.writeBigUInt64BE(BigInt(timestamp), 12);
  h.writeUInt32BE(crc32(h.subarray(0, 20)), 20);
  h.writeUInt32BE(crc32(payload, crc32(h.subarray(0, 24))), 24);
  return h;
}

// A record's header alone, as a Buffer of its own.
export function recordHeader(offset, timestamp, payload) {
  return recordHeaderInto(Buffer.alloc(RECORD_HEADER_BYTES), 0, offset, timestamp, payload);
}
