/** One tag observation produced by a reader adapter, before it is resolved to an asset or location. */
export interface Read {
  /** Antenna port as the reader numbers it, or null when the payload does not say. */
  antenna: number | null;
  /** Hex upper-case without separators for RFID EPCs; see docs/reader-formats.md for BLE and barcodes. */
  tagValue: string;
  /** Signal strength in dBm, or null when the payload does not say. */
  rssi: number | null;
  /** When the reader saw the tag, epoch milliseconds, or null if the payload has no time. */
  readerTime: number | null;
  /** Identity the reader names inside the payload (hostname, reader name, serial or MAC), if any. */
  readerId?: string | null;
  tagType?: TagType;
}

export type TagType = 'rfid' | 'ble' | 'barcode';

export interface AdapterResult {
  reads: Read[];
  /**
   * One message per malformed item, the first MAX_ERRORS of them (./collector.ts); a bad
   * item never hides the good ones.
   */
  errors: string[];
  /** How many items failed, all of them: the count of bad reads cannot stop where the list does. */
  failed: number;
}

export type ReaderFamily = 'impinj-r700' | 'zebra-fx' | 'csl-cs463' | 'generic-json';

export const READER_FAMILIES: readonly ReaderFamily[] = [
  'impinj-r700',
  'zebra-fx',
  'csl-cs463',
  'generic-json',
];
