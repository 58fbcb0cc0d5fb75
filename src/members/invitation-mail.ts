import { createTransport, type Transporter } from 'nodemailer';
import type { UserRole } from '../auth-types.js';

/** What an invitation mail says: where to, from whom, and the link (shown once otherwise). */
export interface InvitationMessage {
  to: string;
  organization: string;
  role: UserRole;
  invitedBy: string;
  url: string;
  expiresAt: Date;
}

/** Whether the mail went out; when not, why (the admin still has the link to pass on). */
export type MailOutcome = { sent: true } | { sent: false; error: string };

/**
 * Sends invitation links by SMTP (TAGTRAIL_SMTP_URL) through nodemailer. A failure to send
 * does not undo the invitation: the admin is shown the link and why the mail did not go.
 */
export class InvitationMailer {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    // Bounded waits: the admin's request waits for the server's answer.
    this.transport = createTransport({
      url: smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(message: InvitationMessage): Promise<MailOutcome> {
    const until = message.expiresAt.toUTCString();
    try {
      await this.transport.sendMail({
        from: this.from,
        to: message.to,
        subject: `You are invited to ${message.organization} on tagtrail`,
        text: [
          `${message.invitedBy} invites you to ${message.organization} on tagtrail as ${/^[aeiou]/.test(message.role) ? 'an' : 'a'} ${message.role}.`,
          '',
          'Open this link to choose a password and create your account:',
          message.url,
          '',
          `The link works once, until ${until}.`,
          'If you did not expect this, ignore this mail.',
        ].join('\n'),
      });
      return { sent: true };
    } catch (err) {
      return { sent: false, error: err instanceof Error ? err.message : String(err) };
    }
  }

  close(): void {
    this.transport.close();
  }
}
