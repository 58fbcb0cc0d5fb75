import { useEffect, useRef, useState } from 'preact/hooks';
import type { TagType } from '../api.js';

export const TAG_TYPES: { id: TagType; label: string }[] = [
  { id: 'rfid', label: 'RFID' },
  { id: 'ble', label: 'BLE' },
  { id: 'barcode', label: 'Barcode' },
];

/** The one label of a tag type, wherever tags are shown (an unknown type shows as sent). */
export const tagTypeLabel = (type: string) => TAG_TYPES.find((t) => t.id === type)?.label ?? type;

/** The Shape Detection API's barcode detector (Chromium on Android, and others); not in TS's DOM types. */
interface BarcodeDetectorLike {
  detect(source: CanvasImageSource): Promise<{ rawValue: string }[]>;
}
type BarcodeDetectorClass = new () => BarcodeDetectorLike;

function barcodeDetector(): BarcodeDetectorClass | null {
  const candidate = (window as unknown as { BarcodeDetector?: BarcodeDetectorClass }).BarcodeDetector;
  return typeof candidate === 'function' && typeof navigator.mediaDevices?.getUserMedia === 'function'
    ? candidate
    : null;
}

/** Whether this browser can read a code with the camera; the typed value works everywhere. */
export const canScanWithCamera = () => barcodeDetector() !== null;

/**
 * The camera, reading until a code is seen: the back camera of a phone where there is one.
 * Frames are checked a few times a second; the stream stops when a code is found, on
 * Cancel, or when the panel goes away.
 */
export function CameraScan({ onValue, onClose }: { onValue(value: string): void; onClose(): void }) {
  const video = useRef<HTMLVideoElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  // The camera runs once per panel, whatever the parent re-renders.
  const found = useRef(onValue);
  found.current = onValue;

  useEffect(() => {
    const Detector = barcodeDetector();
    if (!Detector) return;
    let stream: MediaStream | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const stop = () => {
      live = false;
      if (timer !== undefined) clearTimeout(timer);
      for (const track of stream?.getTracks() ?? []) track.stop();
    };
    const detector = new Detector();
    const look = async () => {
      if (!live || !video.current) return;
      try {
        if (video.current.readyState >= 2) {
          const [code] = await detector.detect(video.current);
          if (code?.rawValue && live) {
            stop();
            found.current(code.rawValue);
            return;
          }
        }
      } catch {
        // A frame that could not be read; try the next one.
      }
      timer = setTimeout(look, 250);
    };
    navigator.mediaDevices
      .getUserMedia({ video: { facingMode: 'environment' }, audio: false })
      .then((s) => {
        stream = s;
        if (!live) return stop();
        if (video.current) {
          video.current.srcObject = s;
          void video.current.play().catch(() => undefined);
        }
        void look();
      })
      .catch(() => {
        if (live) setProblem('The camera could not be opened. Type the value instead.');
      });
    return stop;
  }, []);

  return (
    <section class="camera" aria-label="Camera scan">
      <video ref={video} muted playsInline class="camera-view" />
      <p class="hint" aria-live="polite">
        {problem ?? 'Point the camera at the barcode or QR code.'}
      </p>
      <button type="button" class="button secondary" onClick={onClose}>
        Cancel scan
      </button>
    </section>
  );
}

interface TagFieldsProps {
  id: string;
  type: TagType;
  value: string;
  onType(type: TagType): void;
  onValue(value: string): void;
  /** aria attributes of the value input (its error). */
  valueAttributes?: Record<string, string | undefined>;
  /** aria attributes of the type select (its error). */
  typeAttributes?: Record<string, string | undefined>;
  /** Labels, when several rows share a form ("Tag 2 type"). */
  label?: string;
}

/** A tag's type and value, with a camera button where the browser can read codes. */
export function TagFields({
  id,
  type,
  value,
  onType,
  onValue,
  valueAttributes,
  typeAttributes,
  label = 'Tag',
}: TagFieldsProps) {
  const [scanning, setScanning] = useState(false);
  const camera = canScanWithCamera();
  return (
    <div class="tag-fields">
      <div class="field tag-type">
        <label for={`${id}-type`}>{label} type</label>
        <select
          id={`${id}-type`}
          value={type}
          onChange={(e) => onType(e.currentTarget.value as TagType)}
          {...typeAttributes}
        >
          {TAG_TYPES.map((t) => (
            <option key={t.id} value={t.id}>
              {t.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field tag-value">
        <label for={`${id}-value`}>{label} value</label>
        <div class="scan-row">
          <input
            id={`${id}-value`}
            class="mono"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            value={value}
            onInput={(e) => onValue(e.currentTarget.value)}
            {...valueAttributes}
          />
          {camera && !scanning && (
            <button
              type="button"
              class="button secondary"
              aria-label={`Scan ${label.toLowerCase()} value with the camera`}
              onClick={() => setScanning(true)}
            >
              Scan
            </button>
          )}
        </div>
      </div>
      {scanning && (
        <CameraScan
          onValue={(v) => {
            // The type stays the person's choice: a printed code may carry an RFID EPC.
            setScanning(false);
            onValue(v);
            // A value read by the camera is a change of the field as typing is: a form's
            // listeners (FormErrors) take its message away. A change event, not input: the
            // input's own handler would read the value before it is rendered.
            document.getElementById(`${id}-value`)?.dispatchEvent(new Event('change', { bubbles: true }));
          }}
          onClose={() => setScanning(false)}
        />
      )}
    </div>
  );
}
