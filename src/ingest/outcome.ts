/** What storing a message, a handheld submission or an import batch came to. */
export interface IngestOutcome {
  /** Reads resolved to an asset and a location and stored. */
  good: number;
  /** Malformed items, and reads without a scan point for their antenna. */
  bad: number;
  /** Reads of tags (or asset references) that match no asset. */
  unknown: number;
  errors: string[];
  /** records() only: the records refused after parsing (0-based index in the batch), with the reason. */
  rejected?: Array<{ index: number; reason: string }>;
  /** records() only: the records (0-based index in the batch) that matched no asset, so callers can name them. */
  unknownIndexes?: number[];
  /**
   * readerMessage() only: the message was a redelivery of one already stored (see
   * carriesReaderTimes) and was skipped: nothing stored, nothing counted (all counts 0).
   */
  duplicate?: boolean;
}
