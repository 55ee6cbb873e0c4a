"""A soft actor-critic loop shaped like cleanrl's SAC: the actor acts on one observation with
autograd on; each update computes the critics' targets under no_grad (the actor on the next
observations, a target critic), trains the critic and the actor on a replay batch, and tunes the
entropy coefficient from the actor's log-probabilities on that same batch under no_grad."""

import copy
import random

import torch
from inline_env import Pole
from torch import nn


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, obs):
        mean, log_std = self.body(obs).chunk(2, -1)
        return mean, log_std.clamp(-5, 2)

    def get_action(self, obs):
        mean, log_std = self(obs)
        normal = torch.distributions.Normal(mean, log_std.exp())
        raw = normal.rsample()
        action = torch.tanh(raw)
        log_prob = (normal.log_prob(raw) - torch.log(1 - action.pow(2) + 1e-6)).sum(-1)
        return action, log_prob


def main():
    torch.manual_seed(0)
    random.seed(0)
    env, actor = Pole(), Actor()
    critic = nn.Sequential(nn.Linear(5, 64), nn.ReLU(), nn.Linear(64, 1))
    critic_target = copy.deepcopy(critic)
    log_alpha = torch.zeros(1, requires_grad=True)
    q_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    pi_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    a_opt = torch.optim.Adam([log_alpha], lr=1e-3)
    buffer, obs = [], env.reset()
    for _step in range(400):
        action, _ = actor.get_action(torch.tensor(obs, dtype=torch.float32).unsqueeze(0))
        action = action.detach().numpy()[0]  # acting, autograd on, as cleanrl's SAC does
        next_obs, reward, done = env.step(int(action[0] > 0))
        buffer.append((obs, action, reward, next_obs, done))
        obs = env.reset() if done else next_obs
        if len(buffer) < 64:
            continue
        batch = random.sample(buffer, 64)
        o = torch.tensor([b[0] for b in batch], dtype=torch.float32)
        a = torch.tensor([b[1] for b in batch], dtype=torch.float32)
        r = torch.tensor([b[2] for b in batch], dtype=torch.float32)
        o2 = torch.tensor([b[3] for b in batch], dtype=torch.float32)
        d = torch.tensor([float(b[4]) for b in batch])
        alpha = log_alpha.exp().item()
        with torch.no_grad():  # the critics' targets
            a2, logp2 = actor.get_action(o2)
            q2 = critic_target(torch.cat([o2, a2[:, :1]], 1)).squeeze(-1) - alpha * logp2
            target = r + 0.99 * (1 - d) * q2
        q_loss = (critic(torch.cat([o, a[:, :1]], 1)).squeeze(-1) - target).pow(2).mean()
        q_opt.zero_grad()
        q_loss.backward()
        q_opt.step()
        pi, logp = actor.get_action(o)
        pi_loss = (alpha * logp - critic(torch.cat([o, pi[:, :1]], 1)).squeeze(-1)).mean()
        pi_opt.zero_grad()
        pi_loss.backward()
        pi_opt.step()
        with torch.no_grad():  # the entropy coefficient's target, on the same batch
            _, logp = actor.get_action(o)
        a_loss = (-log_alpha.exp() * (logp + 1.0)).mean()
        a_opt.zero_grad()
        a_loss.backward()
        a_opt.step()
        with torch.no_grad():
            for p, tp in zip(critic.parameters(), critic_target.parameters()):
                tp.mul_(0.995).add_(0.005 * p)


if __name__ == "__main__":
    main()
