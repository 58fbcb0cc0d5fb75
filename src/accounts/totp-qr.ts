import QRCode from 'qrcode';

/**
 * The `otpauth://` URI as a QR code, an SVG `data:` URL the page shows as an image (the
 * web app's CSP allows `img-src data:`). Drawn on the server so the browser loads no QR
 * library; medium error correction is what authenticator apps read off a screen easily.
 */
export async function qrDataUrl(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`;
}
