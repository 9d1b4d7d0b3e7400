/** What a flow program is given: the sandbox, its test key, a developer token with apps:write, the seeded app and a user. */
export interface Flow {
  siteUrl: string;
  key: string;
  token: string;
  appId: string;
  userId: string;
}
