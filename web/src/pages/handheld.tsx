import { useRef, useState } from 'preact/hooks';
import { api, type HandheldResult, type LocationOption, type Page } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { LocationPicker, locationLabel } from '../components/location-picker.js';
import { PageHeader } from '../components/page.js';
import { ScanForm } from '../components/scan-form.js';
import { useAction } from '../components/use-action.js';
import { plural } from '../format.js';

type ChosenLocation = { kind: 'id'; location: LocationOption } | { kind: 'tag'; tag: string };
type ItemKind = 'tag' | 'asset_external_key';
/**
 * A scanned value with the kind it was scanned as: switching the kind later must not change
 * what earlier scans mean (a tag sent as an asset key is simply unknown).
 */
type Item = { kind: ItemKind; value: string };

const sameItem = (a: Item, b: Item) => a.kind === b.kind && a.value === b.value;
const itemId = (item: Item) => `${item.kind}:${item.value}`;
const kindName = (kind: ItemKind) => (kind === 'tag' ? 'tag' : 'asset key');
const ITEM_KINDS: { kind: ItemKind; label: string }[] = [
  { kind: 'tag', label: 'Tag values' },
  { kind: 'asset_external_key', label: 'Asset keys' },
];

/** The most items one submission takes (HANDHELD_MAX_ITEMS on the server). */
const MAX_ITEMS = 1000;

function describeError(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const e = error as { message?: unknown; detail?: unknown; value?: unknown };
    const text = String(e.message ?? e.detail ?? '');
    if (text) return e.value === undefined ? text : `${String(e.value)}: ${text}`;
  }
  return JSON.stringify(error);
}

/**
 * A handheld inventory: where am I (scan the location's barcode, or pick it), what is
 * here (scan each asset's tag), submit. Barcode scanners act as keyboards that type the
 * code and press Enter, so each field acts on Enter.
 */
export function HandheldPage() {
  const [locationText, setLocationText] = useState('');
  const [chosen, setChosen] = useState<ChosenLocation | null>(null);
  const [locationError, setLocationError] = useState<unknown>(null);
  const [picking, setPicking] = useState(false);
  const [itemText, setItemText] = useState('');
  const [itemKind, setItemKind] = useState<ItemKind>('tag');
  const [items, setItems] = useState<Item[]>([]);
  const [result, setResult] = useState<HandheldResult | null>(null);
  const itemField = useRef<HTMLInputElement>(null);
  const locationField = useRef<HTMLInputElement>(null);

  const {
    run: send,
    busy,
    error,
    setError,
  } = useAction(async (where: ChosenLocation, submitted: Item[]) => {
    const res = await api<{ data: HandheldResult }>('/internal/handheld', {
      method: 'POST',
      body: {
        location: where.kind === 'id' ? { id: where.location.id } : { tag: where.tag },
        items: submitted.map((item) =>
          item.kind === 'tag' ? { tag: item.value } : { asset_external_key: item.value },
        ),
      },
    });
    setResult(res.data);
    // The unknown ones stay listed, so they can be checked, removed or scanned as the other
    // kind; so do items scanned while the submission was on its way (not part of it).
    // The answer names unknown items by value only: a value sent as both kinds stays listed
    // as both, which errs on the side of keeping a scan.
    const unknown = new Set(res.data.unknown_items);
    const sent = new Set(submitted.map(itemId));
    setItems((current) => current.filter((i) => !sent.has(itemId(i)) || unknown.has(i.value)));
    itemField.current?.focus();
  });

  const choose = (next: ChosenLocation | null) => {
    setChosen(next);
    setResult(null);
    if (next) setTimeout(() => itemField.current?.focus(), 0);
  };

  // A scanned or typed location: its external key when one matches exactly, else a tag.
  // Scans can follow each other faster than the lookups answer, and answers can come back
  // out of order: only the latest scan's answer chooses the location.
  const lookups = useRef(0);
  const resolveLocation = async (event: Event) => {
    event.preventDefault();
    const value = locationText.trim();
    if (!value) return;
    const mine = ++lookups.current;
    setLocationError(null);
    try {
      const page = await api<Page<LocationOption>>('/internal/locations', { query: { q: value, limit: 20 } });
      if (mine !== lookups.current) return;
      const exact = page.data.find((l) => l.external_key === value);
      choose(exact ? { kind: 'id', location: exact } : { kind: 'tag', tag: value });
      // Only what was looked up: a code scanned into the field meanwhile stays there.
      setLocationText((text) => (text.trim() === value ? '' : text));
    } catch (e) {
      if (mine === lookups.current) setLocationError(e);
    }
  };

  const addItem = (event: Event) => {
    event.preventDefault();
    const value = itemText.trim();
    setItemText('');
    const item: Item = { kind: itemKind, value };
    if (!value || items.some((i) => sameItem(i, item))) return;
    if (items.length >= MAX_ITEMS) {
      setError(new Error(`Submit these ${MAX_ITEMS} first, then scan the rest.`));
      return;
    }
    setItems([...items, item]);
    setResult(null);
  };

  const submit = () => {
    if (!chosen) {
      setError(new Error('Scan or choose the location first.'));
      locationField.current?.focus();
      return;
    }
    if (items.length === 0) {
      setError(new Error('Scan at least one tag or asset.'));
      itemField.current?.focus();
      return;
    }
    void send(chosen, items);
  };

  return (
    <main id="main" class="handheld">
      {/* The location's field first: a keyboard-wedge scanner types into whatever has the
          focus, and the first scan (the location's barcode) went into the heading. */}
      <PageHeader title="Handheld inventory" focus={locationField} />

      <section class="card" aria-labelledby="hh-location-title">
        <h2 id="hh-location-title">1. Location</h2>
        {chosen && (
          <p class="chosen" aria-live="polite">
            <span class="muted">Here:</span>{' '}
            <strong>
              {chosen.kind === 'id' ? locationLabel(chosen.location) : `location tag “${chosen.tag}”`}
            </strong>{' '}
            <button type="button" class="button link" onClick={() => choose(null)}>
              Change
            </button>
          </p>
        )}
        <ScanForm
          id="hh-location"
          label="Scan or type the location's barcode"
          inputRef={locationField}
          enterKeyHint="go"
          value={locationText}
          onValue={setLocationText}
          onSubmit={resolveLocation}
          buttonClass="primary"
          button="Set"
        />
        <ErrorAlert error={locationError} />
        <button
          type="button"
          class="button link"
          aria-expanded={picking}
          aria-controls="hh-picker"
          onClick={() => setPicking(!picking)}
        >
          {picking ? 'Hide the location list' : 'Or choose from a list'}
        </button>
        <div id="hh-picker">
          {picking && (
            <LocationPicker
              id="hh-pick"
              label="Choose the location"
              value={chosen?.kind === 'id' ? chosen.location : null}
              onChange={(l) => {
                if (l) {
                  choose({ kind: 'id', location: l });
                  setPicking(false);
                }
              }}
            />
          )}
        </div>
      </section>

      <section class="card" aria-labelledby="hh-items-title">
        <h2 id="hh-items-title">2. What is here</h2>
        <fieldset class="radio-group inline">
          <legend>Scanned values are</legend>
          {ITEM_KINDS.map(({ kind, label }) => (
            <label class="radio" key={kind}>
              <input
                type="radio"
                name="hh-kind"
                value={kind}
                checked={itemKind === kind}
                onChange={() => setItemKind(kind)}
              />
              {label}
            </label>
          ))}
        </fieldset>
        <ScanForm
          id="hh-item"
          label={`Scan or type ${itemKind === 'tag' ? 'a tag' : 'an asset key'}`}
          inputRef={itemField}
          enterKeyHint="enter"
          value={itemText}
          onValue={setItemText}
          onSubmit={addItem}
          buttonClass="secondary"
          button="Add"
        />
        <p class="hint" aria-live="polite">
          {plural(items.length, 'item')} scanned
        </p>
        {items.length > 0 && (
          <ul class="scanned" aria-label="Scanned items">
            {items.map((item) => (
              <li key={itemId(item)}>
                <span class="mono">{item.value}</span>
                <span class="badge">{kindName(item.kind)}</span>
                {result?.unknown_items.includes(item.value) && (
                  <span class="badge badge-expired">unknown</span>
                )}
                <button
                  type="button"
                  class="button secondary"
                  aria-label={`Remove ${kindName(item.kind)} ${item.value}`}
                  onClick={() => setItems(items.filter((i) => !sameItem(i, item)))}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>

      <div class="submit-bar">
        <ErrorAlert error={error} />
        <div role="status" class="result">
          {result && (
            <div class="alert alert-success">
              <p>
                <strong>{result.applied}</strong> applied, <strong>{result.unknown}</strong> unknown
              </p>
              {result.unknown_items.length > 0 && (
                <p>
                  Unknown (kept in the list):{' '}
                  {result.unknown_items.map((v, i) => (
                    <span key={v}>
                      {i > 0 && ', '}
                      <span class="mono">{v}</span>
                    </span>
                  ))}
                </p>
              )}
              {result.errors.length > 0 && (
                <ul>
                  {result.errors.map((e, i) => (
                    <li key={i}>{describeError(e)}</li>
                  ))}
                </ul>
              )}
            </div>
          )}
        </div>
        <button type="button" class="button primary big wide" disabled={busy} onClick={submit}>
          {busy ? 'Submitting…' : `Submit ${plural(items.length, 'item')}`}
        </button>
      </div>
    </main>
  );
}
