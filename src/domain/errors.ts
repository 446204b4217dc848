// Errors of bad input the user can fix; the command line exits 64 with their message.

/** Bad input (flag, config file, environment): the message says what is wrong and what to do. */
export class UsageError extends Error {
  override name = 'UsageError';
}
