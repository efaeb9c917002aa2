"""Remote bots' keys in the ladder's lobby: a team's key from this machine makes the bot
and its pending remote version; a key from another machine is refused unseen (the lobby
has no TLS: it would have crossed the network in clear) unless ``[lobby] insecure``;
wrong keys are throttled per address like the web's, a right one never."""

from __future__ import annotations

from referee.ladder.keys import KeyGuard
from referee.ladder.lobby import LadderLobby
from referee.ladder.schema import VersionState
from referee.ladder.types import TeamLimits
from referee.protocol import lobby_service
from referee.server.lobby import Lobby


def hello(key: str, name: str = "remote") -> lobby_service.LobbyHello:
    return lobby_service.LobbyHello(
        protocol_version=1, bot_key=key, bot_name=name, max_concurrent_matches=2
    )


async def test_a_key_is_taken_from_this_machine_only_unless_insecure(store):
    key = store.create_team("alpha").key
    ladder = LadderLobby(store, Lobby(), KeyGuard(), TeamLimits())
    refused = ladder.admit(hello(key), "ipv4:192.0.2.9:40000")
    assert isinstance(refused, lobby_service.LobbyRefusal)
    assert "own machine" in refused.message
    name = ladder.admit(hello(key), "ipv4:127.0.0.1:40000")
    assert name == "alpha/remote#1"
    (version_id,) = ladder.names
    version = store.version(version_id)
    assert version.runtime == "remote" and version.state is VersionState.PENDING
    open_ladder = LadderLobby(store, Lobby(), KeyGuard(), TeamLimits(), insecure=True)
    assert open_ladder.admit(hello(key), "ipv4:192.0.2.9:40000") == "alpha/remote#1"


async def test_wrong_keys_are_not_a_bot_and_are_throttled(store):
    store.create_team("alpha")
    ladder = LadderLobby(store, Lobby(), KeyGuard(failures_per_minute=3), TeamLimits())
    wrong = "pdl_0123456789abcdef_" + "A" * 43
    answers = [ladder.admit(hello(wrong), "ipv6:[::1]:5") for _ in range(5)]
    assert answers[:3] == [None, None, None]  # no bot has this key
    assert all(isinstance(a, lobby_service.LobbyRefusal) for a in answers[3:])
    assert "too many refused keys" in answers[-1].message
    key = store.create_team("beta").key
    assert ladder.admit(hello(key), "ipv6:[::1]:5") == "beta/remote#1"  # never the right key
