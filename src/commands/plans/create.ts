import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command.js';
import { flags } from '../../flags.js';
import { createPlan, planCreateBody } from '../../plans/plans.js';
import { showPlan } from '../../plans/render.js';

export default class PlansCreate extends BaseCommand<typeof PlansCreate> {
  static summary = 'Create a pricing plan.';
  static description =
    'The price is a decimal in the currency (9.99 USD, 500 JPY, 1.250 KWD) and is sent in minor units (999, 500, 1250). A free plan has no price; the other kinds need one. --id defaults to the name as a slug ("Pro Monthly" → pro-monthly).';
  static examples = [
    '<%= config.bin %> plans create --name Free --kind free --feature basic',
    '<%= config.bin %> plans create --name "Pro Monthly" --kind monthly --price 9.99 --currency USD --feature export --feature api --api-call-limit 10000 --trial-days 14',
    '<%= config.bin %> plans create --id lifetime --name "Lifetime" --kind one-time --price 5000 --currency JPY',
  ];
  static enableJsonFlag = true;
  static flags = {
    app: flags.app(),
    id: Flags.string({
      description: 'plan id: lowercase letters, digits and "-" (default: the name as a slug)',
    }),
    name: Flags.string({ required: true, description: 'display name' }),
    kind: Flags.string({ required: true, description: 'free, monthly, annual or one-time' }),
    price: Flags.string({ description: 'price as a decimal in the currency, such as 9.99' }),
    currency: Flags.string({ description: 'ISO 4217 currency code, such as USD, EUR, JPY' }),
    feature: Flags.string({ multiple: true, description: 'feature the plan grants (repeatable)' }),
    'api-call-limit': Flags.string({
      description: 'API calls allowed per period, or "none" (default: none)',
    }),
    'trial-days': Flags.integer({
      min: 0,
      max: 365,
      description: 'days of free trial for a new subscriber (monthly and annual plans; 0: none)',
    }),
  };

  async run() {
    const deps = await this.deps();
    const plan = await createPlan(deps, { app: this.flags.app, body: planCreateBody(this.flags) });
    if (!deps.json) {
      deps.out.success(`Created plan ${plan.id}.`);
      showPlan(deps, plan);
    }
    return plan;
  }
}
