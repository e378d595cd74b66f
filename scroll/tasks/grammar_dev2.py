"""The "wide-dev2" development frames (data only: scroll.tasks.grammars adds them as
`GRAMMARS[key]["dev2"]`).

A SECOND development set (train role, 2026-12-05), written later and by another hand than "wide-dev", in
plainer everyday chat: 5 frames per question key, 4 per evidence key, 2 per near-miss key, no word
4-gram shared with any expansion of a "train", "test" or "dev" frame of the same key (tests/test_grammars.py).
Like wide-dev it is for the program writer's development, never a test split.
"""
from __future__ import annotations

DEV2: dict[str, list[str]] = {
    # ------------------------------------------------------------------ update_city
    "city_q": [
        "Okay, silly one: my town of residence right now is which?",
        "Visa paperwork wants the city I reside in; which one is it currently?",
        "Where's my apartment these days, city-wise?",
        "Name my home city as it stands now.",
        "A coworker asked my city at present and I blanked. What should I have said?",
    ],
    "city_move": [
        "Officially a resident of {x} now, the movers left an hour ago.",
        "Finished the move; my new place is in {x}.",
        "Bye bye old flat, hi {x}! Moved and unpacked.",
        "We did it: all my stuff is in {x} and this is home [from now on|now].",
    ],
    "city_restate": [
        "Loving my neighborhood here in {x}, it feels like home.",
        "Honestly {x} has been good to me since I settled here.",
        "Walked to work through {x}, still can't get over how nice my city is.",
        "Another great weekend at home in {x}.",
    ],
    "city_live": [
        "Traffic in {x} is awful, my commute took forever.",
        "As someone who lives in {x}, I know every shortcut.",
    ],
    "city_neighbor": [
        "That upstairs neighbor of ours is heading off to {x} for good.",
        "The family next door sold up; {x} is where they went.",
    ],
    "city_maybe": [
        "I'd love to live in {x} someday.",
        "If I ever leave, {x} might be the place.",
    ],
    "city_visit": [
        "Packing for a conference; {x} until Thursday.",
        "Weekend getaway to {x} was fun, back to reality now.",
    ],
    "city_past": [
        "Back in my student days I rented a room in {x}.",
        "Years ago I had a tiny studio in {x}.",
    ],
    "city_friend": [
        "{f} just moved to {x}, I'm going to miss them.",
        "My pal {f} rents a flat over in {x}.",
    ],
    # ------------------------------------------------------------------ update_employer
    "job_q": [
        "Who pays my salary these days?",
        "Which firm do I currently work for?",
        "Company I'm working at right now: what's it called?",
        "Updating my profile: who's my employer at present?",
        "Where do I clock in nowadays?",
    ],
    "job_start": [
        "Big day: started at {x} and met the whole team.",
        "Took the {x} offer and I've started there.",
        "Officially employed by {x}, my badge works and everything.",
        "Kicked off my new role at {x}, lots of setup.",
    ],
    "job_join": [
        "I've joined {x}, senior analyst title and all.",
        "Left my old company; {x} pays my bills now.",
        "Just came on board at {x}, still learning everyone's names.",
        "Employer update: {x} signed me on, and it's going fine.",
    ],
    "job_now": [
        "Long meeting marathon at {x}, my brain is fried.",
        "The coffee machine at {x} broke again, productivity down.",
    ],
    "job_interview": [
        "Got through a phone screen for {x}, not sure how it went.",
        "Second interview at {x} on Thursday, fingers crossed.",
    ],
    "job_friend": [
        "{f} got hired by {x}, good for them.",
        "Lunch with {f}, who works at {x} these days.",
    ],
    "job_recruiter": [
        "Someone recruiting for {x} messaged me out of the blue.",
        "{x} HR sent another role pitch, not interested.",
    ],
    "job_rel": [
        "My {rel} worked at {x} for decades.",
        "My {rel} just got promoted at {x}.",
    ],
    # ------------------------------------------------------------------ relative_city
    "rel_q": [
        "Which city has my {rel} living in it right now?",
        "If I mailed a card to my {rel} today, what city goes on the envelope?",
        "My {rel} has moved around a lot, so where are they currently?",
        "Where's home for my {rel} nowadays?",
        "Which city for my {rel}, as things stand at present?",
    ],
    "rel_moved": [
        "My {rel} has just moved over to {x}.",
        "Helped my {rel} settle into a new flat in {x}; that's their home now.",
        "My {rel} relocated, {x} permanently.",
        "Guess who lives in {x} now? My {rel}, the move is finished.",
    ],
    "rel_lives": [
        "Phone date with my {rel} over in {x} tonight.",
        "My {rel} keeps a house full of plants in {x}.",
    ],
    "rel_visit": [
        "My {rel} is on a short trip over to {x}.",
        "My {rel} is at a wedding in {x}, back soon.",
    ],
    "rel_maybe": [
        "My {rel} might end up moving to {x}, eventually.",
        "My {rel} keeps saying maybe {x} one day.",
    ],
    "rel_friend": [
        "One friend my {rel} has lives in {x}.",
        "My {rel}'s roommate from college is in {x} now.",
    ],
    "rel_grew": [
        "Childhood home for my {rel}: {x}.",
        "Way back when my {rel} was a kid, home was {x}.",
    ],
    # ------------------------------------------------------------------ count_<activity>
    "dentist_q": [
        "How many dentist trips have there been for me?",
        "Count my dental appointments for me.",
        "What's my total number of teeth cleanings?",
        "Dentist count please: how many appointments did I keep?",
        "Dentist visits: what number am I at?",
    ],
    "dentist_pos": [
        "I had my teeth cleaned {when}, {aside}.",
        "My dental checkup got done {when}, so {aside}.",
        "My dental checkup was {when}, {aside}.",
        "Dentist appointment survived {when}, my jaw still aches; {aside}.",
    ],
    "yoga_q": [
        "Yoga sessions on my record: how many?",
        "My yoga streak in numbers: how many classes?",
        "Count the times I rolled out my mat for yoga class.",
        "How often was I on a yoga mat in class?",
        "What number do my yoga classes come to?",
    ],
    "yoga_pos": [
        "Yoga attended {when} by yours truly; I'm sore, {aside}.",
        "I got myself to yoga {when} and {aside}.",
        "Vinyasa class {when} wiped me out, {aside}.",
        "My body thanked me after yoga {when}, {aside}.",
    ],
    "haircut_q": [
        "How many haircuts happened for me?",
        "Barber visits: what's my count?",
        "Count my trips to the hair salon.",
        "What number of trims have I had done?",
        "Total haircuts for me, any idea?",
    ],
    "haircut_pos": [
        "I finally had a barber tame my mop {when} and {aside}.",
        "My barber appointment got done {when}, and {aside}.",
        "My hair got a trim {when} and {aside}.",
        "Salon chair time for me {when}: got it cut short; {aside}.",
    ],
    # ------------------------------------------------------------------ meet_friend
    "meet_q": [
        "Rounds of {act} that {friend} and I did: how many for me?",
        "How often have I done {act} with {friend}?",
        "Count the {act} dates I had with {friend}.",
        "{friend} and {act}: what count did I reach?",
        "What number of {act} sessions did I share with {friend}?",
    ],
    "meet_pos": [
        "{friend} and I had {act} together {when} and {aside}.",
        "I enjoyed {act} {when} in the company of {friend}; {aside}.",
        "{friend} came along to {act} with me {when} and {aside}.",
        "We got some {act} in {when}, {friend} and me, and {aside}.",
    ],
    "meet_plan": [
        "{friend} and I are going to try {act} soon.",
        "Planning {act} with {friend}, no date yet.",
    ],
    "meet_cancel": [
        "{friend} cancelled our {act} {when}.",
        "We called off {act} {when}, {friend} was sick.",
    ],
    "meet_rel": [
        "I was stuck at my desk {when} while my {rel} enjoyed {act} alongside {friend}.",
        "{friend} invited my {rel} to {act} {when}, not me.",
    ],
    # ------------------------------------------------------------------ date_adopt
    "adopt_q": [
        "When was {pet} adopted by me?",
        "The date {pet} moved in with me, what was it?",
        "Gotcha day for {pet}: when was it?",
        "On what day did I get {pet}?",
        "Any idea which day {pet} joined my family?",
    ],
    "adopt_pos": [
        "I officially adopted {pet} {when}; such a sweet {breed}.",
        "Brought {pet} home from the shelter {when}.",
        "Say hi to my {breed} {pet}, who became mine {when}.",
        "{pet} came to stay {when} and claimed the couch straight away.",
    ],
    "adopt_think": [
        "Thinking about getting a {breed}.",
        "Considering a {breed}, but not sure yet.",
    ],
    "adopt_shelter": [
        "Shelter visit: met a {breed}, haven't decided yet.",
        "The rescue has a lovely {breed} I keep visiting; still thinking.",
    ],
    "adopt_chewed": [
        "{pet} chewed up my favorite shoes.",
        "{pet} stole a sock and ran off with it.",
    ],
    "adopt_neighbor": [
        "My neighbor got a puppy named {other} {when}.",
        "Our neighbors have a kitten now, {other}, since {when}.",
    ],
    "adopt_rel": [
        "My {rel} took in a cat called {other} {when}.",
        "My {rel} got a puppy, {other}, {when}.",
    ],
    "adopt_settled": [
        "{pet} no longer wakes me at night.",
        "{pet} finally gets along with the cat.",
    ],
    # ------------------------------------------------------------------ date_race
    "race_q": [
        "When was my run at the {race}?",
        "Which date goes with my {race}?",
        "The {race}: on what day did I race it?",
        "Remind me: the {race}, what day was that for me?",
        "Can you find when I took on the {race}?",
    ],
    "race_pos": [
        "Finished the {race} in {finish}, that was {when}.",
        "Across the line at the {race} {when}; honestly {aside}.",
        "Got through the {race}, which was {when}; {aside}.",
        "{race} in the books {when}, my time was {finish}.",
    ],
    "race_signup": [
        "Name's on the {race} start list, no backing out!",
        "My {race} entry is in.",
    ],
    "race_training": [
        "Long run to train for the {race}, legs are jelly.",
        "This {race} prep is brutal on my legs.",
    ],
    "race_rel": [
        "Years back, my {rel} did the {race}.",
        "My {rel} is keen on the {race} too.",
    ],
    "race_sore": [
        "Still limping from the {race}.",
        "Hung my {race} medal on the wall.",
    ],
    # ------------------------------------------------------------------ sums
    "bike_q": [
        "For repairs on my bike, what's my spend in total?",
        "Add up the money my bike repairs took.",
        "All told, what did getting the bike fixed set me back?",
        "What's the sum of my bicycle repair bills?",
        "So far, how much money have I sunk into bike repairs?",
    ],
    "bike_paid": [
        "Paid ${amt} to have {item} sorted on the bike.",
        "My bike shop bill for {item}: ${amt}.",
        "The bike had to get {item}; {amt} dollars, not cheap.",
        "Got my bike fixed ({item}): ${amt}.",
    ],
    "taxi_q": [
        "Taxis: what's my spend in total?",
        "Add up what I paid for cabs.",
        "All told, what have my taxi rides cost me?",
        "What's the sum of my cab fares so far?",
        "Taxi money overall: what's the figure for me?",
    ],
    "taxi_paid": [
        "Taxi ride out to {item}, ${amt}.",
        "My cab fare to {item} was ${amt}.",
        "Paid {amt} bucks for the cab ride to {item}.",
        "Grabbed a taxi over to {item}; it was ${amt}.",
    ],
    "grocery_q": [
        "Groceries: what's my spend in total?",
        "Put a number on my grocery bills, all told?",
        "All told, what did groceries cost me?",
        "What's the sum of my grocery spending?",
        "So far, how much money went on my grocery shopping?",
    ],
    "grocery_paid": [
        "Spent ${amt} at {item} stocking up on groceries.",
        "My grocery trip at {item} was ${amt}.",
        "Paid {amt} dollars for food at {item}.",
        "My grocery receipt from {item} said ${amt}.",
    ],
}
