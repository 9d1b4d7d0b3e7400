import { Flags } from '@oclif/core';

/** Shared flag factories, so every command spells the same thing the same way. */
export const flags = {
  /** The app a command acts on; defaults to the profile's app (`mkt apps use`), else the API key's app. */
  app: () =>
    Flags.string({
      description: "app id (app_…); default: the profile's app (`mkt apps use`), else the API key's app",
    }),
  /** The simulator's test user a command acts on. */
  testUser: () => Flags.string({ description: 'test user id (usr_…)', required: true }),
  /** Skip the confirmation of a destructive action; required when there is no terminal. */
  yes: () =>
    Flags.boolean({ char: 'y', description: 'do not ask for confirmation (required without a terminal)' }),
};
