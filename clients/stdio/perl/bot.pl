#!/usr/bin/env perl
# A Pusoy Dos / Big Two bot for the referee's stdio protocol, in Perl 5 with core
# modules only (JSON::PP has been in core since 5.14): no gRPC.
#
#   referee match --bot "stdio:perl clients/stdio/perl/bot.pl" --bot greedy --bot random --bot greedy
#
# The referee's bridge writes one JSON object per line on stdin, one per message of the
# Play stream; its one key is the message's kind (welcome, snapshot, event, prompt,
# result, refusal). The bot answers each prompt, and each rejection of its current turn
# that leaves attempts, with one line: the cards ("5D 5C") or "pass". Debug output goes
# to stderr. docs/protocol.md, section 8, has the whole protocol.
#
# The strategy is choose(). Option --misbehave makes the first answer of each hand a card
# the bot does not hold, to exercise the rejection path.
use strict;
use warnings;
use JSON::PP ();

$| = 1;    # flush every answer: the bridge reads lines as they come
my $json = JSON::PP->new->utf8;
my $misbehave = grep { $_ eq '--misbehave' } @ARGV;

# The weakest legal play that beats the table; on a lead, the weakest play of the most
# cards that sheds the lowest card. legal_plays come weakest first, the hand ascending.
sub choose {
    my ($prompt) = @_;
    my @plays = @{ $prompt->{legal_plays} // [] };
    return 'pass' unless @plays;
    return join ' ', @{ $plays[0]{cards} } unless $prompt->{is_lead};
    my $lowest = $prompt->{hand}[0];
    my @with_lowest = grep { grep { $_ eq $lowest } @{ $_->{cards} } } @plays;
    @with_lowest = @plays unless @with_lowest;
    my $best = $with_lowest[0];
    for my $play (@with_lowest) {
        $best = $play if @{ $play->{cards} } > @{ $best->{cards} };
    }
    return join ' ', @{ $best->{cards} };
}

# After a rejection: a pass when allowed, else the weakest legal play.
sub fallback {
    my ($prompt) = @_;
    my @plays = @{ $prompt->{legal_plays} // [] };
    return 'pass' if $prompt->{can_pass} || !@plays;
    return join ' ', @{ $plays[0]{cards} };
}

# The first card of the deck (3C 3S 3H 3D 4C ...) that the hand does not hold.
sub not_held {
    my ($prompt) = @_;
    my %held = map { $_ => 1 } @{ $prompt->{hand} };
    for my $rank (split //, '3456789TJQKA2') {
        for my $suit (split //, 'CSHD') {
            return "$rank$suit" unless $held{"$rank$suit"};
        }
    }
}

my ($prompt, $hand_seen) = (undef, 0);
while (my $line = <STDIN>) {
    my $msg = eval { $json->decode($line) };
    if (ref $msg ne 'HASH') {
        warn "perl bot: a line that is not a JSON object: $line";
        next;
    }
    if (my $p = $msg->{prompt}) {
        $prompt = $p;
        my $hand = $p->{state}{hand_number} // 0;
        if ($misbehave && $hand != $hand_seen) {
            $hand_seen = $hand;
            print not_held($p), "\n";
        }
        else {
            print choose($p), "\n";
        }
    }
    elsif (my $r = $msg->{result}) {
        if ($prompt && !$r->{accepted} && ($r->{attempts_left} // 0) > 0
            && $r->{turn_id} eq $prompt->{turn_id})
        {
            warn "perl bot: rejected: ", $r->{message} // "", "\n";
            print fallback($prompt), "\n";
        }
    }
    elsif (my $refusal = $msg->{refusal}) {
        warn "perl bot: refused: $refusal->{message}\n";
        exit 1;
    }
    elsif ($msg->{event} && $msg->{event}{match_ended}) {
        exit 0;
    }
}
