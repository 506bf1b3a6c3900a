from .kit import answer


async def test_attack(seat):
    bob = await seat.join("bob", answer("none"))
    alice = await seat.join("alice")
    ack = await alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]})
    print(ack)
    assert ack["ok"], ack
    await alice.wait_for("attack.resolved")
    print(alice.events)
    print(bob.decisions)
