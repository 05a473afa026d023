package fleetdevice

import "regexp"

// The regular expressions of Queclink's @Track reports, as Traccar's
// Gl200TextProtocolDecoder spells them.

// end ends a report's pattern as most end: the device's time, the count
// number, the `$`.
func (p *patternBuilder) end() *regexp.Regexp {
	return p.
		number("(dddd)(dd)(dd)").           // date (yyyymmdd)
		number("(dd)(dd)(dd)").optional(2). // time (hhmmss)
		text(",").
		number("(xxxx)"). // count number
		text("$").optional(1).
		whole()
}

var (
	glLocation = newPattern().
			number("(d{1,2}.?d?)?,").           // hdop
			number("(d{1,3}.d)?,").             // speed
			number("(d{1,3}.?d?)?,").           // course
			number("(-?d{1,5}.d)?,").           // altitude
			number("(-?d{1,3}.d{6})?,").        // longitude
			number("(-?d{1,2}.d{6})?,").        // latitude
			number("(dddd)(dd)(dd)").           // date (yyyymmdd)
			number("(dd)(dd)(dd)").optional(2). // time (hhmmss)
			groupBegin().
			number(",d+").                  // wifi count
			number("((?:,x{12},-d+,,,)+)"). // wifi
			groupEnd("?").
			text(",").
			number("(d+)?,"). // mcc
			number("(d+)?,"). // mnc
			groupBegin().
			number("(d+),"). // lac
			number("(d+),"). // cid
			or().
			number("(x+)?,"). // lac
			number("(x+)?,"). // cid
			groupEnd("").
			number("(?:d+|(d+.d))?,") // rssi / odometer

	glLocationFind = glLocation.anywhere()

	glVer = newPattern().
		text("+").expression("(?:RESP|BUFF):GTVER,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,").           // device name
		expression("([^,]*),").         // device type
		number("(xxxx),").              // firmware version
		number("(xxxx),").              // hardware version
		number("(dddd)(dd)(dd)").       // date (yyyymmdd)
		number("(dd)(dd)(dd),").        // time (hhmmss)
		number("(xxxx)").               // counter
		text("$").optional(1).
		whole()

	glObd = newPattern().
		text("+RESP:GTOBD,").
		expression("(?:.{6}|.{10})?,").   // protocol version
		number("(d{15}|x{14}),").         // imei
		expression("(?:[0-9A-Z]{17})?,"). // vin
		expression("[^,]{0,20},").        // device name
		expression("[01],").              // report type
		number("x{1,8},").                // report mask
		expression("(?:[0-9A-Z]{17})?,"). // vin
		number("[01],").                  // obd connect
		number("(?:d{1,5})?,").           // obd voltage
		number("(?:x{8})?,").             // support pids
		number("(d{1,5})?,").             // engine rpm
		number("(d{1,3})?,").             // speed
		number("(-?d{1,3})?,").           // coolant temp
		number("(d+.?d*|Inf|NaN)?,").     // fuel consumption
		number("(d{1,5})?,").             // dtcs cleared distance
		number("(?:d{1,5})?,").           //
		expression("([01])?,").           // obd connect
		number("(d{1,3})?,").             // number of dtcs
		number("(x*),").                  // dtcs
		number("(d{1,3})?,").             // throttle
		number("(?:d{1,3})?,").           // engine load
		number("(d{1,3})?,").             // fuel level
		expression("(?:[0-9A],)?").       // obd protocol
		number("(d+),").                  // odometer
		expression(glLocation.String()).  //
		number("(d{1,7}.d)?,").           // odometer
		end()

	glFri = newPattern().
		text("+").expression("(?:RESP|BUFF):GT...,").
		expression("(?:.{6}|.{10})?,").     // protocol version
		number("(d{15}|x{14}),").           // imei
		expression("(?:([0-9A-Z]{17}),)?"). // vin
		expression("[^,]*,").               // device name
		number("(d+)?,").                   // power
		number("(d{1,2}),").optional(1).    // report type
		number("d{1,2},").optional(1).      // count
		number("d*,").optional(1).          // reserved
		number("(d+),").optional(1).        // battery
		expression("((?:").
		expression(nonCapturing(glLocation.String())). // read again by glLocationFind
		expression(")+)").
		groupBegin().
		number("d{1,2},").
		number("(d{1,5})?,").     // battery
		number("(d{1,3}),").      // battery level
		number("[01],").          // mode
		number("(?:[01])?,").     // motion
		number("(-?d{1,2}.d)?,"). // temperature
		or().
		number("(d{1,7}.d)?,").         // odometer
		number("(d{5}:dd:dd)?,").       // hour meter
		number("(x+)?,").               // adc 1
		number("(x+)?,").               // adc 2
		number("d*,").optional(1).      // reserved
		number("(d{1,3})?,").           // battery
		number("(x{6})?,").             // device status
		number("(d+)?,").               // rpm
		number("(?:d+.?d*|Inf|NaN)?,"). // fuel consumption
		number("(d+)?,").               // fuel level
		or().
		number("(-?d),").    // rssi
		number("(d{1,3}),"). // battery
		or().
		number("(d{1,7}.d)?,").optional(1). // odometer
		number("(d{1,3})?,").               // battery
		groupEnd("").
		any().
		end()

	glLsw = newPattern().
		text("+RESP:").expression("GT[LT]SW,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,").           // device name
		number("[01],").                // type
		number("([01]),").              // state
		expression(glLocation.String()).
		end()

	glIda = newPattern().
		text("+RESP:GTIDA,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,,").          // device name
		number("([^,]+),").             // rfid
		expression("[01],").            // report type
		number("1,").                   // count
		expression(glLocation.String()).
		number("(d+.d),"). // odometer
		text(",,,,").
		end()

	glWif = newPattern().
		text("+RESP:GTWIF,").
		expression("(?:.{6}|.{10})?,").      // protocol version
		number("(d{15}|x{14}),").            // imei
		expression("[^,]*,").                // device name
		number("(d+),").                     // count
		number("((?:x{12},-?d+,,,,)+),,,,"). // wifi
		number("(d{1,3}),").                 // battery
		end()

	glGsm = newPattern().
		text("+RESP:GTGSM,").
		expression("(?:.{6}|.{10})?,").     // protocol version
		number("(d{15}|x{14}),").           // imei
		expression("(?:STR|CTN|NMR|RTL),"). // fix type
		expression("(.*)").                 // cells
		end()

	glPna = newPattern().
		text("+RESP:GT").expression("P[NF]A,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,").           // device name
		end()

	glDar = newPattern().
		text("+RESP:GTDAR,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,").           // device name
		number("(d),").                 // warning type
		number("(d{1,2}),,,").          // fatigue degree
		expression(glLocation.String()).
		any().
		end()

	glDtt = newPattern().
		text("+RESP:GTDTT,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,,,").         // device name
		number("d,").                   // data type
		number("d+,").                  // data length
		number("(x+),").                // data
		end()

	glBaa = newPattern().
		text("+RESP:GTBAA,").
		expression("(?:.{6}|.{10})?,").  // protocol version
		number("(d{15}|x{14}),").        // imei
		expression("[^,]*,").            // device name
		number("x+,").                   // index
		number("d,").                    // accessory type
		number("d,").                    // accessory model
		number("x+,").                   // alarm type
		number("(x{4}),").               // append mask
		expression("((?:[^,]+,){0,6})"). // accessory optionals
		expression(glLocation.String()).
		any().
		end()

	glBid = newPattern().
		text("+RESP:GTBID,").
		expression("(?:.{6}|.{10})?,").  // protocol version
		number("(d{15}|x{14}),").        // imei
		expression("[^,]*,").            // device name
		number("d,").                    // count
		number("d,").                    // accessory model
		number("(x{4}),").               // append mask
		expression("((?:[^,]+,){0,2})"). // accessory optionals
		expression(glLocation.String()).
		any().
		end()

	glLsa = newPattern().
		text("+RESP:GTLSA,").
		expression("(?:.{6}|.{10})?,"). // protocol version
		number("(d{15}|x{14}),").       // imei
		expression("[^,]*,").           // device name
		number("d,").                   // event state 1
		number("d,").                   // event state 2
		number("d+,").                  // number
		expression(glLocation.String()).
		number("d+,").        // bit error rate
		number("(d),").       // light level
		number("(d+),").      // battery level
		number("[01],").      // mode selection
		number("[01]?,").     // movement status
		number("(-?d+.d)?,"). // temperature
		end()
)
