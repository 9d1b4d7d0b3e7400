import { Help, type Command, type Interfaces } from '@oclif/core';

/** The commands a newcomer runs first, in order (the README's tour). */
const START_HERE = ['sandbox:start', 'login', 'whoami'];

/**
 * mkt's help: the root opens with the three commands to start with, and each topic ends with
 * examples, the first of each of its commands. Everything shown comes from the commands themselves.
 */
export default class MktHelp extends Help {
  public override formatRoot(): string {
    const start = START_HERE.map((id) => this.config.findCommand(id)).filter((c) => c !== undefined);
    const list = this.renderList(
      start.map((c) => [`${this.config.bin} ${c.id.replace(/:/g, ' ')}`, this.summary(c)]),
      { indentation: 2, spacer: '\n', stripAnsi: this.opts.stripAnsi },
    );
    return `${this.section('START HERE', list)}\n\n${super.formatRoot()}`;
  }

  protected override async showTopicHelp(topic: Interfaces.Topic): Promise<void> {
    // Collected first: oclif's own topic help rewrites the ids it prints ("plans:list" to "plans list").
    const examples = this.sortedCommands
      .filter((c) => c.id.startsWith(`${topic.name}:`))
      .map((c) => firstExample(c))
      .filter((e) => e !== undefined)
      .map((e) => `$ ${this.render(e)}`);
    await super.showTopicHelp(topic);
    if (examples.length > 0) this.log(`${this.section('EXAMPLES', examples.join('\n'))}\n`);
  }
}

function firstExample(c: Command.Loadable): string | undefined {
  const [first] = c.examples ?? [];
  return typeof first === 'string' ? first.split('\n').at(-1) : first?.command;
}
